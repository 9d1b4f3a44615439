// End-to-end check of the application page's day-2 views against a server
// running its controller: the app "guestbook" (a Deployment of two Pods
// behind a Service and an Ingress, synced automatically) in a project that
// reports orphaned resources, with graphcd-cm turning badges on and giving
// deep links (see TestAppDay2).
//
//   node e2e/app-day2.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
//
// SIGNALS (environment) is a directory: the script writes "orphans-shown"
// there once the orphans are on screen and waits for the test to write
// "orphan-added" after it created one more; then "orphan-seen" once that
// one shows, and waits for "orphan-removed" after the test deleted it.
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('app-day2.mjs')
const signals = process.env.SIGNALS
if (!signals) {
  console.error('SIGNALS must name the directory shared with the Go test')
  process.exit(2)
}
const slow = { timeout: 120_000 }

async function waitForFile(path) {
  const deadline = Date.now() + 120_000
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`no ${path} after 2 minutes`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

await run(artifacts, async (page, { shot, check }) => {
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
  await page.goto(`${base}/login`)
  await login(page, user, password)
  await page.goto(`${base}/applications/guestbook`)
  const facts = page.locator('.app-facts')
  await facts.locator('[data-status="Synced"]').waitFor(slow)
  await page.waitForFunction(() => document.querySelectorAll('.graph .rnode[data-kind="Pod"]').length === 2, null, slow)
  check(true, 'the app syncs itself and the graph shows its two Pods')
  await page.evaluate(() => {
    window.graphcdNoReload = true
  })

  // Deep links: application.links on the header, only http(s) as links.
  const appLink = page.getByRole('list', { name: 'Links of guestbook' }).getByRole('link', { name: 'Dashboard' })
  check((await appLink.getAttribute('href')) === 'https://dash.example.com/d/guestbook', 'the header links to the dashboard built from the app')
  check((await appLink.getAttribute('target')) === '_blank' && /noopener/.test((await appLink.getAttribute('rel')) ?? ''), 'the link opens in a new tab without an opener')

  // The status badge and its snippets.
  await page.getByText('Status badge', { exact: true }).click()
  const img = page.getByRole('img', { name: 'Status badge of guestbook' })
  await page.waitForFunction(() => {
    const i = document.querySelector('.badge-snippet img')
    return i instanceof HTMLImageElement && i.complete && i.naturalWidth > 0
  })
  check((await img.getAttribute('src')) === `${base}/api/badge?name=guestbook`, `the badge image loads from /api/badge (${await img.getAttribute('src')})`)
  const markdown = await page.getByRole('textbox', { name: 'Markdown' }).inputValue()
  check(markdown === `[![guestbook](${base}/api/badge?name=guestbook)](${base}/applications/guestbook)`, `the Markdown snippet embeds the badge and links to the app: ${markdown}`)
  check((await page.getByRole('textbox', { name: 'HTML' }).inputValue()).includes(`<img src="${base}/api/badge?name=guestbook"`), 'the HTML snippet embeds the badge')
  await page.getByRole('button', { name: 'Copy the Markdown snippet' }).click()
  await page.locator('.badge-snippet').getByText('Copied.').waitFor()
  check((await page.evaluate(() => navigator.clipboard.readText())) === markdown, 'Copy puts the Markdown snippet on the clipboard')
  await shot('badge-and-links')

  // Orphans: hidden until asked for, then shown with a mark, and live.
  const graph = page.locator('.graph')
  check((await graph.locator('.rnode[data-orphaned="true"]').count()) === 0, 'orphaned resources are hidden by default')
  await page.locator('.tree-bar').getByText(/orphaned/).waitFor(slow)
  check(true, `the count names the orphans: ${await page.locator('.tree-bar .k').textContent()}`)
  await page.getByLabel(/Show orphaned/).check()
  await page.waitForURL(/orphans=show/)
  const stray = graph.locator('.rnode[data-orphaned="true"][data-kind="ConfigMap"][data-name="stray"]')
  await stray.waitFor(slow)
  check((await stray.textContent()).includes('orphaned'), 'the untracked ConfigMap "stray" shows as an orphaned node, marked')
  await shot('orphans')
  writeFileSync(join(signals, 'orphans-shown'), '')
  await waitForFile(join(signals, 'orphan-added'))
  await graph.locator('.rnode[data-orphaned="true"][data-name="stray-late"]').waitFor(slow)
  check(true, 'an orphan created meanwhile appears without a reload')
  writeFileSync(join(signals, 'orphan-seen'), '')
  await waitForFile(join(signals, 'orphan-removed'))
  await graph.locator('.rnode[data-orphaned="true"][data-name="stray-late"]').waitFor({ state: 'detached', ...slow })
  check(true, 'and disappears without a reload once deleted')

  // Filters, kept in the URL: only orphans, then only Pods in the table.
  await page.getByLabel('Only orphaned').check()
  await page.waitForURL(/orphans=only/)
  await page.getByRole('button', { name: 'Table', exact: true }).click()
  await page.waitForURL(/view=table/)
  const rows = () => page.locator('.rtable [role="rowgroup"] [role="row"]')
  await page.waitForFunction(() => {
    const r = [...document.querySelectorAll('.rtable [role="rowgroup"] [role="row"]')]
    return r.length >= 2 && r.every((x) => x.getAttribute('data-orphaned') === 'true')
  })
  check((await rows().count()) >= 2, `"Only orphaned" lists orphans alone (${await rows().count()})`)
  await page.getByLabel('Show orphaned', { exact: false }).uncheck()
  await page.waitForURL((u) => !u.search.includes('orphans='))
  await page.locator('.tree-filters fieldset', { hasText: 'Kind' }).getByLabel(/\bPod \(/).check()
  await page.waitForURL(/kind=Pod/)
  await page.waitForFunction(() => {
    const r = [...document.querySelectorAll('.rtable [role="rowgroup"] [role="row"]')]
    return r.length === 2 && r.every((x) => x.getAttribute('data-kind') === 'Pod')
  })
  check(true, `the Pod kind filter leaves the two Pods: ${page.url()}`)
  await page.locator('.tree-filters fieldset', { hasText: 'Health status' }).getByLabel('Degraded').check()
  await page.waitForURL(/health=Degraded/)
  await page.waitForFunction(() => document.querySelectorAll('.rtable [role="rowgroup"] [role="row"]').length === 0)
  check(true, 'with health Degraded as well, no resource matches')
  await page.reload()
  await page.waitForURL(/kind=Pod/)
  check(
    await page.locator('.tree-filters fieldset', { hasText: 'Health status' }).getByLabel('Degraded').isChecked(),
    'the filters come back from the URL after a reload',
  )
  await page.getByRole('button', { name: /^Clear/ }).click()
  await page.waitForURL((u) => !u.search.includes('kind=') && !u.search.includes('health='))
  await page.waitForFunction(() => {
    const kinds = [...document.querySelectorAll('.rtable [role="rowgroup"] [role="row"]')].map((r) => r.getAttribute('data-kind'))
    return ['Ingress', 'Service', 'Deployment', 'ReplicaSet', 'Pod'].every((k) => kinds.includes(k))
  }, null, slow)
  check(true, `Clear shows every kind again (${await rows().count()} rows)`)

  // The Pods view, by owner and by node.
  await page.getByRole('button', { name: 'Pods', exact: true }).click()
  await page.waitForURL(/view=pods/)
  const groups = page.locator('.pod-group')
  await groups.filter({ hasText: /^ReplicaSet guestbook-/ }).waitFor()
  check((await groups.count()) === 1 && (await groups.first().locator('[data-pod]').count()) === 2, 'by owner: one ReplicaSet with both Pods')
  await page.getByRole('button', { name: 'By node', exact: true }).click()
  await page.waitForFunction(() => [...document.querySelectorAll('.pod-group')].every((g) => g.getAttribute('data-group')?.startsWith('node:')))
  const nodes = await groups.evaluateAll((gs) => gs.map((g) => `${g.querySelector('h3')?.textContent} (${g.querySelectorAll('[data-pod]').length})`))
  check(nodes.length >= 1, `by node: ${nodes.join(', ')}`)
  await shot('pods')

  // The network view: Ingress → Service → Pods.
  await page.getByRole('button', { name: 'Network', exact: true }).click()
  await page.waitForURL(/view=network/)
  const ing = page.locator('.net-card[data-ingress="guestbook"]')
  await ing.locator('[data-backend="guestbook"] button', { hasText: 'guestbook' }).waitFor(slow)
  check((await ing.textContent()).includes('guestbook.example.com'), 'the Ingress shows its host and routes to the Service guestbook')
  const svc = page.locator('.net-card[data-service="guestbook"]')
  await page.waitForFunction(() => document.querySelectorAll('.net-card[data-service="guestbook"] [data-pod]').length === 2)
  check((await svc.textContent()).includes('Deployment guestbook'), 'the Service selects the Deployment and its two Pods')
  await shot('network')

  // A resource's deep links in its panel.
  await page.getByRole('button', { name: 'Table', exact: true }).click()
  await page.locator('.rtable [role="row"][data-kind="Deployment"] button').click()
  const resLink = page.getByRole('list', { name: 'Links of Deployment guestbook' }).getByRole('link', { name: 'Deployment logs' })
  await resLink.waitFor()
  check((await resLink.getAttribute('href')) === 'https://logs.example.com/?deploy=guestbook', "the Deployment's panel links to its logs")
  await page.keyboard.press('Escape')
  await page.waitForURL((u) => !u.search.includes('resource='))

  // The Parameters tab: a directory source's options, saved.
  await page.getByRole('button', { name: 'Parameters', exact: true }).click()
  await page.waitForURL(/view=parameters/)
  const form = page.locator('.params-source')
  await form.getByText(/Directory/).first().waitFor()
  const recurse = form.getByLabel(/recurse/)
  check(!(await recurse.isChecked()), 'the directory source does not recurse yet')
  await recurse.check()
  await form.getByRole('button', { name: 'Save parameters' }).click()
  await form.getByText('Saved: the application is compared with the new parameters.').waitFor()
  check(await recurse.isChecked(), 'Save parameters stores recurse: true (the test reads it from the Application)')
  await shot('parameters')

  // An application the user may not update: its parameters read-only.
  await page.goto(`${base}/applications/readonly?view=parameters`)
  await page.getByText('You may not change this application: the parameters are read-only.').waitFor()
  const param = page.getByRole('textbox', { name: 'Value of image.tag' })
  check((await param.inputValue()) === 'v1' && !(await param.isEditable()), 'a Helm parameter of an app the user may not update shows, read-only')
  check((await page.getByRole('button', { name: 'Save parameters' }).count()) === 0, 'and there is no Save button')

  // The project's deep links.
  await page.goto(`${base}/settings/projects/default`)
  const projLink = page.getByRole('list', { name: 'Links of project default' }).getByRole('link', { name: 'Audit' })
  check((await projLink.getAttribute('href')) === 'https://audit.example.com/?project=default', "the project's page links to its audit")
})
