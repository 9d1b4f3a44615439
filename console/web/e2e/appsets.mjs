// End-to-end check of the ApplicationSet pages: the topbar's
// "ApplicationSets" list, "New ApplicationSet" with a list generator,
// Preview first (a duplicate element fails by name, then the fixed set
// generates two Applications), Create opens the set's page, where the
// Applications the controller generates appear live with their badges,
// linking to their pages; Edit adds a third element, previewed then
// saved, whose Application appears too; the list counts them; Delete, confirmed, goes
// back to the list without the set. On "guarded" (project locked, where
// RBAC denies admin update and delete, and which does not exist) the page
// shows the error and offers neither Edit nor Delete. On "rolling" (a
// RollingSync of two steps, dev then prod) each step shows its
// Application, live, up to Healthy.
//
//   GRAPHCD_E2E_REPO=URL GRAPHCD_E2E_NS=NAMESPACE node e2e/appsets.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('appsets.mjs')
const repo = process.env.GRAPHCD_E2E_REPO
const ns = process.env.GRAPHCD_E2E_NS
if (!repo || !ns) {
  console.error('GRAPHCD_E2E_REPO and GRAPHCD_E2E_NS are required')
  process.exit(2)
}

/** manifest is the set fleet with one list element per env. */
function manifest(...envs) {
  return [
    'apiVersion: graphcd.io/v1alpha1',
    'kind: ApplicationSet',
    'metadata:',
    '  name: fleet',
    'spec:',
    '  generators:',
    '    - list:',
    '        elements:',
    ...envs.map((e) => `          - env: ${e}`),
    '  template:',
    '    metadata:',
    "      name: 'fleet-{{env}}'",
    '    spec:',
    '      project: default',
    '      source:',
    `        repoURL: ${repo}`,
    '        path: app',
    '        targetRevision: main',
    '      destination:',
    '        server: https://kubernetes.default.svc',
    `        namespace: ${ns}`,
    '',
  ].join('\n')
}

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)
  await page.getByRole('link', { name: 'ApplicationSets', exact: true }).click()
  await page.waitForURL(/\/applicationsets$/)
  await page.getByText('2 ApplicationSets', { exact: true }).waitFor()
  check(await page.locator('[data-set="guarded"]').isVisible(), 'the list shows the sets there are, guarded')
  check((await page.locator('[data-set="rolling"]').textContent()).includes('RollingSync'), 'and rolling, with its strategy')

  await page.getByRole('link', { name: 'New ApplicationSet' }).click()
  await page.waitForURL(/\/new-applicationset$/)
  // The editor loads lazily; until then the text shows read-only.
  const editor = page.locator('[contenteditable="true"][aria-label="ApplicationSet manifest"]')
  await editor.waitFor()
  const write = async (text) => {
    await editor.click()
    await page.keyboard.press('ControlOrMeta+a')
    await page.keyboard.insertText(text)
  }

  await write(manifest('dev', 'prod', 'dev'))
  await page.getByRole('button', { name: 'Preview' }).click()
  const preview = page.getByRole('region', { name: 'Preview' })
  await preview.waitFor()
  const failed = preview.locator('li.failed')
  await failed.first().waitFor()
  const failures = await failed.allTextContents()
  check(failures.length === 1 && failures[0].includes('fleet-dev'), `the duplicate element fails, named fleet-dev (${failures.join(' | ')})`)
  await shot('preview-duplicate')

  await write(manifest('dev', 'prod'))
  check((await preview.count()) === 0, 'a change to the manifest clears the preview it no longer matches')
  await page.getByRole('button', { name: 'Preview' }).click()
  await preview.getByText('2 Applications would be generated.').waitFor()
  const names = await preview.locator('[data-preview]').evaluateAll((els) => els.map((e) => e.getAttribute('data-preview')))
  check(names.join(',') === 'fleet-dev,fleet-prod', `the preview lists fleet-dev and fleet-prod (${names.join(', ')})`)
  check((await preview.locator('li.failed').count()) === 0, 'and no element fails')
  check((await preview.textContent()).includes(`${repo} / app`), 'each with its source')
  await shot('preview')

  await page.getByRole('button', { name: 'Create', exact: true }).click()
  await page.waitForURL(new RegExp(`/applicationsets/${ns}/fleet$`))
  check(true, 'created; the set page opened')
  const apps = page.getByRole('list', { name: 'Generated applications' })
  // The controller generates them; the page follows without a reload.
  for (const app of ['fleet-dev', 'fleet-prod']) {
    await apps.locator(`[data-app="${app}"]`).waitFor({ timeout: 120_000 })
    const href = await apps.getByRole('link', { name: app }).getAttribute('href')
    check(href === `/applications/${ns}/${app}`, `${app} appears, linking to its page (${href})`)
  }
  const statuses = await apps.locator('[data-app="fleet-dev"] .badge').evaluateAll((els) => els.map((e) => e.getAttribute('data-status')))
  check(statuses.length >= 1, `fleet-dev shows its sync status (${statuses.join(', ')})`)
  await page.locator('[data-condition="ResourcesUpToDate"]').waitFor()
  check(true, 'the conditions the controller wrote show')
  await shot('set-page')

  // Edit: a third element, previewed, saved; its Application appears live.
  await page.getByRole('toolbar', { name: 'Actions on fleet' }).getByRole('button', { name: 'Edit…' }).click()
  await editor.waitFor()
  check((await editor.textContent()).includes('env: prod'), 'the editor starts from the set as it is')
  await write(manifest('dev', 'prod', 'stage'))
  await page.getByRole('button', { name: 'Preview' }).click()
  await preview.getByText('3 Applications would be generated.').waitFor()
  await shot('edit-preview')
  await page.getByRole('button', { name: 'Save', exact: true }).click()
  await editor.waitFor({ state: 'detached' })
  await apps.locator('[data-app="fleet-stage"]').waitFor({ timeout: 120_000 })
  check(true, 'saved; fleet-stage appears without a reload')

  await page.getByRole('link', { name: 'ApplicationSets', exact: true }).first().click()
  await page.waitForURL(/\/applicationsets$/)
  await page.locator('[data-set="fleet"] [data-count="3"]').waitFor()
  check((await page.locator('[data-set="fleet"]').textContent()).includes('list (3 elements)'), 'the list shows fleet with its generator and three Applications')
  await shot('list')

  await page.getByRole('link', { name: 'fleet', exact: true }).click()
  const bar = page.getByRole('toolbar', { name: 'Actions on fleet' })
  await bar.getByRole('button', { name: 'Delete' }).click()
  await bar.getByRole('button', { name: 'Yes, delete' }).click()
  await page.waitForURL(/\/applicationsets$/)
  await page.locator('[data-set="fleet"]').waitFor({ state: 'detached' })
  check(true, 'deleted; the list no longer shows fleet')

  await page.goto(`${base}/applicationsets/${ns}/guarded`)
  // The set and what admin may do with it arrive together.
  await page.locator('[data-condition="ErrorOccurred"]').waitFor()
  const offered = await page.getByRole('main').getByRole('button').allTextContents()
  check(!offered.some((b) => /Edit|Delete/.test(b)), `guarded offers no edit or delete (${offered.join(', ') || 'no button'})`)
  check((await page.locator('.set-head .badge').first().getAttribute('data-status')) === 'Error', 'guarded shows its error state')
  await shot('guarded')

  // The RollingSync the controller runs: dev in step 1, prod in step 2,
  // each reaching Healthy without a reload.
  await page.goto(`${base}/applicationsets/${ns}/rolling`)
  const rollout = page.getByRole('region', { name: 'RollingSync' })
  for (const [step, app] of [
    ['1', 'rolling-dev'],
    ['2', 'rolling-prod'],
  ]) {
    await rollout.locator(`[data-step="${step}"] [data-app="${app}"] .badge[data-status="Healthy"]`).waitFor({ timeout: 180_000 })
    check(true, `step ${step}: ${app} is Healthy`)
  }
  await shot('rolling')
})
