// End-to-end check of the resource actions menu of the resource panel,
// against a server running its controller: on the synced app "web", the
// Deployment's menu offers Restart (and Resume rollout disabled, since it
// is not paused); Restart runs after a confirmation and the panel says
// what it wrote. The ConfigMap's menu offers graphcd-cm's custom action
// set-mode, whose parameter the dialog asks for (refusing nothing for a
// string) and sends. The Go test then checks the cluster: the pods rolled
// and the ConfigMap holds the value typed here.
//
//   GRAPHCD_E2E_NS=NAMESPACE node e2e/resource-actions.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('resource-actions.mjs')
const ns = process.env.GRAPHCD_E2E_NS
if (!ns) {
  console.error('GRAPHCD_E2E_NS is required')
  process.exit(2)
}
const slow = { timeout: 120_000 }

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)

  const panelOf = async (group, kind, name) => {
    await page.goto(`${base}/applications/web?resource=${encodeURIComponent([group, kind, ns, name].join('/'))}`)
    const panel = page.locator('.rpanel')
    await panel.getByRole('heading', { name: `${kind} ${name}` }).waitFor(slow)
    return panel
  }

  let panel = await panelOf('apps', 'Deployment', 'web')
  await panel.getByRole('button', { name: 'Actions ▾' }).click(slow)
  let menu = page.getByRole('menu', { name: 'Actions of Deployment web' })
  const restart = menu.getByRole('menuitem', { name: 'Restart', exact: true })
  await page.waitForFunction(() => {
    const b = [...document.querySelectorAll('[role="menuitem"]')].find((e) => e.textContent === 'Restart')
    return b && !b.disabled
  }, null, slow)
  check(await menu.getByRole('menuitem', { name: /^Resume rollout/ }).isDisabled(), 'Resume rollout is disabled on a Deployment that is not paused')
  await shot('deployment-menu')
  await restart.click()
  let dialog = page.getByRole('dialog', { name: 'Run Restart on Deployment web' })
  await dialog.getByText('Run the action restart on Deployment web now?').waitFor()
  await dialog.getByRole('button', { name: 'Run', exact: true }).click()
  await panel.getByRole('status').filter({ hasText: 'restart ran: patched Deployment web' }).waitFor(slow)
  check(true, 'Restart ran from the menu, and the panel says it patched the Deployment')

  panel = await panelOf('', 'ConfigMap', 'settings')
  await panel.getByRole('button', { name: 'Actions ▾' }).click(slow)
  menu = page.getByRole('menu', { name: 'Actions of ConfigMap settings' })
  await page.waitForFunction(() => {
    const b = [...document.querySelectorAll('[role="menuitem"]')].find((e) => e.textContent === 'set-mode')
    return b && !b.disabled
  }, null, slow)
  await menu.getByRole('menuitem', { name: 'set-mode', exact: true }).click()
  dialog = page.getByRole('dialog', { name: 'Run set-mode on ConfigMap settings' })
  const mode = dialog.getByLabel('mode (string)')
  check((await mode.inputValue()) === 'prod', 'the parameter starts at its default, prod')
  await mode.fill('staging')
  await shot('custom-action-dialog')
  await dialog.getByRole('button', { name: 'Run', exact: true }).click()
  await panel.getByRole('status').filter({ hasText: 'set-mode ran: patched ConfigMap settings' }).waitFor(slow)
  check(true, 'the custom action ran with the typed parameter')
  await shot('custom-action-done')
})
