// End-to-end check that the list follows the controller live: the app
// "live" (a ConfigMap in Git, not yet in the cluster) shows OutOfSync and
// Missing; after a click on its Sync button the row turns Healthy with the
// sync done, without a reload, from applicationEvents.
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
  await page.getByRole('button', { name: 'Sync live' }).click()
  check(true, 'clicked Sync on the row of live')
  // Health and the operation's end are what the sync changes for sure.
  // (Sync status is left out: the controller has been seen to keep an app
  // OutOfSync after a successful sync until its next comparison, which the
  // console then shows, as the server says.)
  await live.locator('[data-status="Healthy"]').waitFor(slow)
  await live.locator('[data-status="Sync OK"]').waitFor(slow)
  check(true, `live turns Healthy with its sync done (got ${(await badges(page, 'live')).join(', ')})`)
  check(await page.evaluate(() => window.graphcdNoReload === true), 'the page was not reloaded')
  await shot('synced')
})
