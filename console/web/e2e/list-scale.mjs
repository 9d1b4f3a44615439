// Measures the applications list on a big installation: after logging in,
// how long a fresh load of /applications takes to paint its first row and
// its total, and to show the next page after a scroll to the end. Prints
// one JSON line of milliseconds; asserts nothing about speed.
//
//   node e2e/list-scale.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('list-scale.mjs')

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)
  await page.locator('[role="row"][data-app]').first().waitFor({ timeout: 60_000 })

  const t0 = Date.now()
  await page.goto(`${base}/applications`)
  await page.locator('[role="row"][data-app]').first().waitFor({ timeout: 60_000 })
  const firstRow = Date.now() - t0
  await page.getByText(/^[\d,]+ applications$/).waitFor({ timeout: 60_000 })
  const total = Date.now() - t0
  const count = await page.getByText(/^[\d,]+ applications$/).textContent()
  await shot('big-list')

  const before = await page.locator('.more button').textContent()
  const t1 = Date.now()
  await page.locator('.scroller').evaluate((el) => el.scrollTo(0, el.scrollHeight))
  await page.waitForFunction((b) => document.querySelector('.more button')?.textContent !== b, before, { timeout: 60_000 })
  const nextPage = Date.now() - t1
  const rendered = await page.locator('[role="row"][data-app]').count()
  check(rendered < 100, `the table renders ${rendered} rows, not all it loaded`)
  console.log(JSON.stringify({ count, firstRowMs: firstRow, totalMs: total, nextPageMs: nextPage }))
})
