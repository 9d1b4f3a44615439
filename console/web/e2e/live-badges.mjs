// End-to-end check that the list follows the controller live: the app
// "live" (a ConfigMap in Git, not yet in the cluster) shows OutOfSync and
// Missing; the script asks the API to sync it and, without reloading, the
// row turns Synced and Healthy from applicationEvents.
//
//   node e2e/live-badges.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
import { args, badges, login, row, run } from './browser.mjs'

const { base, user, password, artifacts } = args('live-badges.mjs')
const slow = { timeout: 90_000 } // the controller's first comparison clones and renders

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)
  const live = row(page, 'live')
  await live.locator('[data-status="OutOfSync"]').waitFor(slow)
  await live.locator('[data-status="Missing"]').waitFor(slow)
  check(true, `live shows OutOfSync + Missing (got ${(await badges(page, 'live')).join(', ')})`)
  await shot('out-of-sync')

  // A reload would clear this mark; the badges must change without one.
  await page.evaluate(() => {
    window.graphcdNoReload = true
  })
  const res = await page.evaluate(async () => {
    const r = await fetch('/api/graphql', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { syncApplication(input: {application: {name: "live"}}) { name } }' }),
    })
    return { status: r.status, body: await r.text() }
  })
  check(res.status === 200 && !res.body.includes('"errors"'), `syncApplication accepted (${res.status} ${res.body})`)

  await live.locator('[data-status="Synced"]').waitFor(slow)
  await live.locator('[data-status="Healthy"]').waitFor(slow)
  check(true, `live turns Synced + Healthy (got ${(await badges(page, 'live')).join(', ')})`)
  check(await page.evaluate(() => window.graphcdNoReload === true), 'the page was not reloaded')
  await shot('synced')
})
