// End-to-end check of the application actions: on the page of "waves"
// (deployed once at the first of two commits), the sync dialog syncs the
// second commit with prune; the operation's progress, wave by wave,
// reaches Succeeded and the app Synced without a reload; the history
// panel then rolls back to the first deployment, which succeeds too.
//
//   node e2e/actions-sync.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('actions-sync.mjs')
const slow = { timeout: 120_000 } // the controller clones, renders and waits for health

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)
  await page.goto(`${base}/applications/waves`)
  const bar = page.getByRole('toolbar', { name: 'Actions on waves' })
  await bar.waitFor(slow)
  check((await bar.getByRole('button', { name: /^History \(1\)$/ }).count()) === 1, 'the action bar shows one deployment in the history')

  // A reload would clear this mark; progress must arrive without one.
  await page.evaluate(() => {
    window.graphcdNoReload = true
  })
  await bar.getByRole('button', { name: 'Sync…' }).click()
  const dialog = page.getByRole('dialog', { name: 'Sync waves' })
  await dialog.waitFor()
  await dialog.getByLabel('Prune', { exact: false }).first().check()
  await dialog.getByRole('radio', { name: /Only those checked/ }).check()
  const listed = await dialog.locator('.resource-list li').allTextContents()
  check(listed.some((l) => l.includes('ConfigMap/old') && l.includes('to prune')), `the resource list marks old for pruning (${listed.join(' | ')})`)
  await dialog.getByRole('radio', { name: /^All \d+ resources$/ }).check()
  await shot('sync-dialog')
  await page.setViewportSize({ width: 390, height: 844 })
  const sideways = await dialog.evaluate((d) => d.scrollWidth - d.clientWidth)
  check(sideways <= 0, `at 390 px wide the sync dialog does not scroll sideways (overflow ${sideways}px)`)
  await shot('sync-dialog-phone')
  await page.setViewportSize({ width: 1280, height: 800 })
  await dialog.getByRole('button', { name: 'Synchronize' }).click()
  await dialog.waitFor({ state: 'detached' })
  check(true, 'sync requested with prune from the dialog')

  const progress = page.locator('.op-progress')
  await progress.waitFor()
  // At once the progress stands for the new operation, never for the
  // first deployment's (Succeeded, wave 0 only) still recorded.
  const shown = await progress.evaluate((p) => ({ phase: p.getAttribute('data-phase'), wave1: p.querySelector('li.wave[data-wave="1"]') !== null }))
  check(shown.phase !== 'Succeeded' || shown.wave1, `the progress shown first is the new operation's (${shown.phase})`)
  await page.locator('.op-progress[data-phase="Succeeded"]').waitFor(slow)
  const waves = await progress.locator('li.wave').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-wave')}:${e.getAttribute('data-state')}`))
  check(waves.includes('0:done') && waves.includes('1:done'), `the operation shows waves 0 and 1 done (${waves.join(', ')})`)
  const results = await progress.locator('li.wave li').allTextContents()
  check(results.some((r) => r.includes('ConfigMap/old') && r.includes('Pruned')), `old was pruned (${results.join(' | ')})`)
  await progress.locator('[data-status="Synced"]').waitFor(slow)
  check(true, 'the operation succeeded and the app is Synced')
  check(await page.evaluate(() => window.graphcdNoReload === true), 'the page was not reloaded')
  await shot('synced')

  await bar.getByRole('button', { name: /^History \(2\)$/ }).click()
  const history = page.getByRole('dialog', { name: 'History of waves' })
  await history.waitFor()
  const entries = await history.locator('li[data-history-id]').evaluateAll((els) => els.map((e) => e.getAttribute('data-history-id')))
  check(entries.length === 2, `history lists two deployments, newest first (${entries.join(', ')})`)
  const first = entries.at(-1)
  await history.getByRole('button', { name: `Roll back to #${first}` }).click()
  await shot('history')
  await history.getByRole('button', { name: 'Confirm rollback' }).click()
  await history.waitFor({ state: 'detached' })
  check(true, `rollback to deployment #${first} requested`)
  // The rollback's own operation: it names the first commit's revision.
  await bar.getByRole('button', { name: /^History \(3\)$/ }).waitFor(slow)
  await page.locator('.op-progress[data-phase="Succeeded"]').waitFor(slow)
  const after = await progress.locator('li.wave li').allTextContents()
  // Without prune, what only the second commit has stays (PruneSkipped).
  check(
    after.some((r) => r.includes('ConfigMap/old') && r.includes('Synced')) && after.some((r) => r.includes('ConfigMap/later') && r.includes('PruneSkipped')),
    `the rollback applied the first commit's resources and left later unpruned (${after.join(' | ')})`,
  )
  check(await page.evaluate(() => window.graphcdNoReload === true), 'still no reload')
  await shot('rollback')
})
