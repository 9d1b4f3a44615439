// End-to-end check of a sync's live progress and of Terminate: "slow" has
// a PreSync hook that never ends, then ConfigMaps in waves 0 and 1. After
// a sync from the dialog, the progress shows the hook running and both
// waves waiting, without a reload; Terminate stops the operation.
//
//   node e2e/actions-terminate.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('actions-terminate.mjs')
const slow = { timeout: 120_000 } // the controller clones and renders first

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)
  await page.goto(`${base}/applications/slow`)
  const bar = page.getByRole('toolbar', { name: 'Actions on slow' })
  await bar.waitFor(slow)
  check((await bar.getByRole('button', { name: 'Terminate' }).count()) === 0, 'no Terminate button without an operation')
  await page.evaluate(() => {
    window.graphcdNoReload = true
  })
  // The dialog lists resources once the controller compared the app.
  await bar.getByRole('button', { name: 'Sync…' }).click()
  const dialog = page.getByRole('dialog', { name: 'Sync slow' })
  await dialog.getByRole('radio', { name: /^All [1-9]\d* resources$/ }).waitFor(slow)
  await dialog.getByRole('button', { name: 'Synchronize' }).click()
  await dialog.waitFor({ state: 'detached' })

  const progress = page.locator('.op-progress[data-phase="Running"]')
  await progress.locator('li.wave[data-state="running"]', { hasText: 'PreSync' }).waitFor(slow)
  await progress.locator('li.wave[data-wave="1"][data-state="waiting"]').waitFor(slow)
  const waves = await progress.locator('li.wave').evaluateAll((els) => els.map((e) => `${e.querySelector('h3')?.textContent?.trim()}`))
  check(waves.length === 3, `the progress shows the hook running and the waves waiting: ${waves.join(' | ')}`)
  const waiting = await progress.locator('li.wave[data-state="waiting"] li[data-state="waiting"]').allTextContents()
  check(waiting.some((w) => w.includes('ConfigMap/first')) && waiting.some((w) => w.includes('ConfigMap/second')), `first and second wait (${waiting.join(' | ')})`)
  check(((await progress.locator('.op-message').textContent()) ?? '').includes('migrate'), 'the message names the hook it waits for')
  await shot('progress-running')

  await bar.getByRole('button', { name: 'Terminate' }).click()
  await page.locator('.op-progress[data-phase="Failed"], .op-progress[data-phase="Error"]').waitFor(slow)
  const message = await page.locator('.op-progress .op-message').textContent()
  check(true, `terminated: the operation ended (${message?.trim()})`)
  await bar.getByRole('button', { name: 'Terminate' }).waitFor({ state: 'detached' })
  check(true, 'the Terminate button is gone once the operation ended')
  check(await page.evaluate(() => window.graphcdNoReload === true), 'the page was not reloaded')
  await shot('terminated')
})
