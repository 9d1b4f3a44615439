// End-to-end check of a multi-source application's header: each source is
// listed (repository, path or ref, target revision) with the commit it
// was compared at, in the order of spec.sources.
//
//   node e2e/app-sources.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
//
// APP (environment) is the application; REVISIONS the comma-separated
// commits the header must show, in source order.
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('app-sources.mjs')
const app = process.env.APP
const revisions = (process.env.REVISIONS ?? '').split(',').filter(Boolean)
if (!app || revisions.length === 0) {
  console.error('APP and REVISIONS must be set')
  process.exit(2)
}

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)
  await page.goto(`${base}/applications/${app}`)
  const sources = page.locator('.app-head .source')
  await page.waitForFunction(
    (n) => document.querySelectorAll('.app-head .source .rev').length === n,
    revisions.length,
    { timeout: 120_000 },
  )
  check((await sources.count()) === revisions.length, `the header lists ${revisions.length} sources`)
  for (const [i, sha] of revisions.entries()) {
    const rev = sources.nth(i).locator('code.rev')
    check((await rev.getAttribute('title')) === sha, `source ${i + 1} shows the commit it was compared at, ${sha.slice(0, 8)}`)
  }
  await sources.nth(1).getByText('ref values').waitFor()
  check(true, 'the ref source names its ref')
  await shot('sources')
})
