// End-to-end check of creating, editing and deleting an application: the
// topbar's "New application" form, filled in, then changed in its YAML tab
// (the form follows); Create opens the app's page; Edit changes its target
// revision; Delete, non-cascading and confirmed by typing the name, goes
// back to the list without it. On "guarded" (project locked, where RBAC
// denies admin sync, update and delete) the bar offers none of those.
//
//   GRAPHCD_E2E_REPO=URL GRAPHCD_E2E_NS=NAMESPACE node e2e/actions-create.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('actions-create.mjs')
const repo = process.env.GRAPHCD_E2E_REPO
const ns = process.env.GRAPHCD_E2E_NS
if (!repo || !ns) {
  console.error('GRAPHCD_E2E_REPO and GRAPHCD_E2E_NS are required')
  process.exit(2)
}

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)
  await page.getByRole('link', { name: 'New application' }).click()
  await page.waitForURL(/\/new-application$/)
  await page.getByLabel('Name', { exact: true }).fill('fresh')
  await page.getByLabel('Repository URL').fill(repo)
  await page.getByLabel('Path').fill('app')
  await page.getByRole('textbox', { name: 'Namespace' }).fill(ns)
  await shot('create-form')

  await page.getByRole('tab', { name: 'YAML' }).click()
  // The editor loads lazily; until then the text shows read-only.
  const editor = page.locator('[contenteditable="true"][aria-label="Application manifest"]')
  await editor.waitFor()
  const text = await editor.textContent()
  check(text.includes(`repoURL: ${repo}`) && text.includes('name: fresh') && text.includes('path: app'), 'the YAML tab shows what the form holds')
  // Rewrite the manifest in the editor; the form must take it up.
  await editor.click()
  await page.keyboard.press('ControlOrMeta+a')
  await page.keyboard.insertText(
    [
      'apiVersion: graphcd.io/v1alpha1',
      'kind: Application',
      'metadata:',
      '  name: fresh',
      'spec:',
      '  project: default',
      '  source:',
      `    repoURL: ${repo}`,
      '    path: app',
      '    targetRevision: main',
      '  destination:',
      '    server: https://kubernetes.default.svc',
      `    namespace: ${ns}`,
      '  syncPolicy:',
      '    syncOptions:',
      '      - CreateNamespace=true',
      '',
    ].join('\n'),
  )
  await shot('create-yaml')
  await page.getByRole('tab', { name: 'Form' }).click()
  check((await page.getByLabel('Target revision').inputValue()) === 'main', 'the form took the target revision from the YAML')
  check(await page.getByRole('checkbox', { name: /CreateNamespace=true/ }).isChecked(), 'the form took the sync option from the YAML')
  await page.getByRole('button', { name: 'Create', exact: true }).click()
  await page.waitForURL(/\/applications\/fresh$/)
  const bar = page.getByRole('toolbar', { name: 'Actions on fresh' })
  await bar.waitFor()
  check(true, 'created; the application page opened')

  await bar.getByRole('button', { name: 'Edit…' }).click()
  const edit = page.getByRole('dialog', { name: 'Edit fresh' })
  await edit.getByLabel('Target revision').fill('HEAD')
  await edit.getByRole('button', { name: 'Save' }).click()
  await edit.waitFor({ state: 'detached' })
  await bar.getByRole('button', { name: 'Edit…' }).click()
  check((await edit.getByLabel('Target revision').inputValue()) === 'HEAD', 'the edit was saved (target revision HEAD)')
  await shot('edit')
  await edit.getByRole('button', { name: 'Cancel' }).click()

  await bar.getByRole('button', { name: 'Delete…' }).click()
  const del = page.getByRole('dialog', { name: 'Delete fresh' })
  await del.getByRole('radio', { name: /Non-cascading/ }).check()
  const button = del.getByRole('button', { name: 'Delete', exact: true })
  check(await button.isDisabled(), 'Delete waits for the name')
  await del.getByLabel(/Type the application's name/).fill('fresh')
  await shot('delete')
  await button.click()
  await page.waitForURL(/\/applications$/)
  await page.locator('[role="row"][data-app="fresh"]').waitFor({ state: 'detached', timeout: 60_000 })
  check(true, 'deleted; the list no longer shows fresh')

  await page.goto(`${base}/applications/guarded`)
  const guarded = page.getByRole('toolbar', { name: 'Actions on guarded' })
  // The bar is busy until the server said what admin may do.
  await page.locator('[role="toolbar"][aria-label="Actions on guarded"][aria-busy="false"]').waitFor()
  const offered = await guarded.getByRole('button').allTextContents()
  check(!offered.some((b) => /Sync|Edit|Delete/.test(b)), `guarded offers no sync, edit or delete (${offered.join(', ')})`)
  await shot('guarded')
})
