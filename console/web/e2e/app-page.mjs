// End-to-end check of the application page against a server running its
// controller: open the app "guestbook" from the list, see its resources as
// Missing nodes and rows before the first sync, sync it, see the
// Deployment → ReplicaSet → Pod tree; then the Go test scales the
// Deployment to 4 in the cluster and the page turns OutOfSync live, with
// the change in the resource panel's diff and the Pods grouped.
//
//   node e2e/app-page.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
//
// SIGNALS (environment) is a directory: the script writes "tree-shown"
// there once the tree is on screen and waits for the test to write
// "edited" after it changed the Deployment.
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('app-page.mjs')
const signals = process.env.SIGNALS
if (!signals) {
  console.error('SIGNALS must name the directory shared with the Go test')
  process.exit(2)
}
const slow = { timeout: 120_000 } // the controller clones, renders and waits for Pods

async function waitForFile(path) {
  const deadline = Date.now() + 120_000
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`no ${path} after 2 minutes`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)
  const link = page.getByRole('link', { name: 'guestbook', exact: true })
  await link.waitFor()
  await shot('list')
  await link.click()
  await page.waitForURL(/\/applications\/guestbook$/)
  check(true, 'a click on the name in the list opens /applications/guestbook')

  const facts = page.locator('.app-facts')
  await facts.locator('[data-status="OutOfSync"]').waitFor(slow)
  check(true, 'the header shows OutOfSync before the first sync')
  // A reload would clear this mark; everything below must arrive live.
  await page.evaluate(() => {
    window.graphcdNoReload = true
  })

  // Before its first sync nothing of the app exists, yet the tree shows
  // what a sync will create: the Deployment and the Secret as Missing nodes.
  const graph = page.locator('.graph')
  const missingNodes = (n) => document.querySelectorAll('.graph .rnode[data-missing="true"]').length === n
  await page.waitForFunction(missingNodes, 2, slow)
  for (const kind of ['Deployment', 'Secret']) {
    const node = graph.locator(`.rnode[data-missing="true"][data-kind="${kind}"]`)
    await node.locator('[data-status="Missing"]').waitFor()
    await node.locator('[data-status="OutOfSync"]').waitFor()
  }
  check(true, 'the graph shows the Deployment and the Secret as Missing + OutOfSync nodes before the first sync')
  await page.locator('.tree-bar').getByText('2 resources, all missing: a sync creates them').waitFor()
  check(true, 'the count says both resources are missing')
  await shot('missing')
  await page.getByRole('button', { name: 'Table', exact: true }).click()
  await page.waitForURL(/view=table/)
  await page.waitForFunction(() => document.querySelectorAll('.rtable [role="row"][data-missing="true"]').length === 2, null, slow)
  for (const kind of ['Deployment', 'Secret']) {
    const r = page.locator(`.rtable [role="row"][data-missing="true"][data-kind="${kind}"]`)
    await r.locator('[data-status="Missing"]').waitFor()
    await r.locator('[data-status="OutOfSync"]').waitFor()
  }
  check(true, 'the table lists the Deployment and the Secret as Missing + OutOfSync')
  // A missing resource opens like any other: Git's manifest, nothing live.
  await page.getByRole('button', { name: 'guestbook', exact: true }).click()
  await page.locator('.rpanel .summary').getByText('Not yet: Git declares it, and a sync creates it.').waitFor()
  await page.getByRole('tab', { name: 'Desired' }).click()
  await page.locator('.rpanel .cm-content').filter({ hasText: 'kind: Deployment' }).waitFor()
  check(true, "a missing Deployment's panel says a sync creates it and shows its desired manifest")
  await page.keyboard.press('Escape')
  await page.waitForURL((u) => !u.search.includes('resource='))
  await page.getByRole('button', { name: 'Graph', exact: true }).click()
  await graph.locator('.rnode[data-missing="true"]').first().waitFor()

  // Sync through the API with the page's session (the action bar belongs to another change).
  const synced = await page.evaluate(async () => {
    const res = await fetch('/api/graphql', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { syncApplication(input: { application: { name: "guestbook" } }) { name } }' }),
    })
    return res.json()
  })
  check(!synced.errors, `syncApplication accepted (${JSON.stringify(synced.errors ?? synced.data)})`)

  await facts.locator('[data-status="Synced"]').waitFor(slow)
  await facts.locator('[data-status="Healthy"]').waitFor(slow)
  check(true, `the header turns Synced + Healthy live: ${(await facts.textContent())?.replace(/\s+/g, ' ')}`)
  await facts.locator('code.rev').waitFor()
  check(/^[0-9a-f]{7}$/.test((await facts.locator('code.rev').textContent()) ?? ''), 'the revision shows as a short SHA')

  for (const kind of ['Deployment', 'ReplicaSet', 'Pod']) await graph.locator(`.rnode[data-kind="${kind}"]`).first().waitFor(slow)
  await page.waitForFunction(() => document.querySelectorAll('.graph .rnode[data-kind="Pod"]').length === 2, null, slow)
  check(true, 'the graph shows Deployment → ReplicaSet → 2 Pods')
  await page.waitForFunction(missingNodes, 0, slow)
  await graph.locator('.rnode[data-kind="Deployment"] [data-status="Synced"]').waitFor(slow)
  check(true, 'after the sync the Deployment and the Secret are live nodes, none missing')
  // The tree changed shape (missing nodes became live ones with children):
  // wait for the new layout's edges rather than count the old one's.
  await page.waitForFunction(() => document.querySelectorAll('.graph .react-flow__edge').length >= 4, null, slow)
  const edges = await page.locator('.graph .react-flow__edge').count()
  check(true, `the graph draws the edges app → Deployment → ReplicaSet → Pods (${edges} edges)`)
  await shot('tree')

  // The table lists the same objects.
  await page.getByRole('button', { name: 'Table', exact: true }).click()
  await page.waitForURL(/view=table/)
  const rows = page.getByRole('table', { name: 'Resources' }).getByRole('row')
  await page.waitForFunction(() => document.querySelectorAll('.rtable [role="rowgroup"] [role="row"]').length === 5, null, slow)
  check(true, `the table view lists 5 resources (${(await rows.allTextContents()).slice(1).join(' | ')})`)

  // A Secret's values never show: the server masks them (and so would the page).
  await page.getByRole('button', { name: 'guestbook-db', exact: true }).click()
  await page.getByRole('tab', { name: 'Live' }).click()
  const secret = page.locator('.rpanel .cm-content')
  await secret.filter({ hasText: /password: "?\+{8,}"?/ }).waitFor()
  const shown = (await secret.textContent()) ?? ''
  check(!shown.includes('hunter2') && !shown.includes('aHVudGVyMg'), 'the Secret shows its password as a mask (++++++++), never the value')
  await page.keyboard.press('Escape')
  await page.waitForURL((u) => !u.search.includes('resource='))
  await page.getByRole('button', { name: 'Graph', exact: true }).click()
  await graph.locator('.rnode[data-kind="Deployment"]').waitFor()

  // Open the Deployment's panel from the keyboard; the URL names it.
  await graph.locator('.rnode[data-kind="Deployment"] button.rname').focus()
  await page.keyboard.press('Enter')
  await page.waitForURL(/resource=apps%2FDeployment%2F/)
  check(true, `Enter on the Deployment opens its panel and the URL names it: ${page.url()}`)
  await page.getByRole('tab', { name: 'Live' }).click()
  await page.locator('.rpanel .cm-content').waitFor()
  check(/kind: Deployment/.test((await page.locator('.rpanel .cm-content').textContent()) ?? ''), 'the live manifest shows in CodeMirror')

  writeFileSync(join(signals, 'tree-shown'), '')
  await waitForFile(join(signals, 'edited'))
  check(true, 'the test changed the Deployment in the cluster (replicas 2 → 4)')

  // The node whose sync status changed flashes for a moment.
  await graph.locator('.rnode.flash[data-kind="Deployment"]').waitFor(slow)
  check(true, 'the Deployment node is highlighted when its status changes')
  await facts.locator('[data-status="OutOfSync"]').waitFor(slow)
  check(true, 'the header turns OutOfSync without a reload')
  await graph.locator('.rnode[data-kind="Deployment"] [data-status="OutOfSync"]').waitFor(slow)
  check(true, 'the Deployment node shows OutOfSync')
  await page.getByRole('tab', { name: /Diff/ }).click()
  const summary = page.getByTestId('diff-summary')
  await page.waitForFunction(() => /^1 line only live, 1 line only desired/.test(document.querySelector('[data-testid="diff-summary"]')?.textContent ?? ''), null, slow)
  check(true, `the diff shows the change: ${await summary.textContent()}`)
  // The panel reads the manifests again after each tree update: wait for the edited one.
  const merge = page.locator('.rpanel .cm-mergeView')
  await merge.locator('.cm-changedLine', { hasText: 'replicas: 4' }).first().waitFor(slow)
  await merge.locator('.cm-changedLine', { hasText: 'replicas: 2' }).first().waitFor(slow)
  const changed = await merge.locator('.cm-changedLine').allTextContents()
  check(changed.length === 2, `side by side, only replicas: 4 (live) faces replicas: 2 (desired): ${changed.join(' | ')}`)
  await shot('diff')
  await page.getByRole('button', { name: 'Inline' }).click()
  await page.locator('.rpanel .cm-deletedChunk').first().waitFor()
  check(true, 'the inline diff shows the live line as a deletion')
  await shot('diff-inline')

  await page.keyboard.press('Escape')
  await page.waitForURL((u) => !u.search.includes('resource='))
  check(true, 'Escape closes the panel and drops it from the URL')
  check(await page.evaluate(() => window.graphcdNoReload === true), 'the page was not reloaded')

  // Four Pods of one ReplicaSet show as one group node until it is opened.
  const group = graph.locator('.rnode[data-kind="group"]')
  await group.filter({ hasText: '4 pods' }).waitFor(slow)
  check((await graph.locator('.rnode[data-kind="Pod"]').count()) === 0, 'the four Pods show as one "4 pods" node')
  await group.locator('button.rname').click()
  await page.waitForFunction(() => document.querySelectorAll('.graph .rnode[data-kind="Pod"]').length === 4, null, slow)
  check(true, 'a click on the group shows the four Pods')
  await page.getByRole('button', { name: 'Group Pods again' }).waitFor()
  await shot('pods')

  // A Pod's panel has a Logs tab that follows the log: KWOK serves every
  // fake container the same lines (internal/testenv/localcluster.PodLogLines) as the
  // node's kubelet, through the API server and graphcd's podLogs.
  await graph.locator('.rnode[data-kind="Pod"] button.rname').first().click()
  // Git does not declare the Pod: its live manifest comes from the
  // cluster, and its own Events (the scheduler's) are listed.
  await page.getByRole('tab', { name: 'Live' }).click()
  await page.locator('.rpanel-body').getByText('kind: Pod').waitFor(slow)
  check(true, "a Pod's Live tab shows its manifest, read from the cluster")
  await page.getByRole('tab', { name: 'Events' }).click()
  await page.locator('.rpanel-body .events li', { hasText: 'Scheduled' }).first().waitFor(slow)
  check(true, `a Pod's Events tab lists its own events (${(await page.locator('.rpanel-body .events li').first().textContent())?.trim()})`)
  await shot('pod-events')
  await page.getByRole('tab', { name: 'Logs' }).click()
  const log = page.getByRole('log')
  await log.locator('.log-line', { hasText: "a KWOK fake container's log" }).waitFor(slow)
  // The lines arrive as a stream: wait for the last before counting.
  await log.locator('.log-line').nth(2).waitFor(slow)
  check((await log.locator('.log-line').count()) === 3, `a Pod's Logs tab shows the container's log, read from its node (${(await log.textContent())?.slice(0, 120)})`)
  check((await page.locator('.rpanel-body .error').count()) === 0, 'the log shows no error')
  await page.getByLabel('Search').last().fill('healthz')
  await page.locator('.rpanel-body').getByText('1 matching line').waitFor()
  check((await log.locator('mark').textContent()) === 'healthz', 'searching the log highlights the one matching line')
  await shot('logs')

  // A phone-width screen keeps the page usable.
  await page.keyboard.press('Escape')
  await page.setViewportSize({ width: 390, height: 844 })
  await graph.locator('.rnode[data-kind="Deployment"]').waitFor()
  await shot('phone')

  // An application that does not exist says so and what to do.
  await page.goto(`${base}/applications/no-such-app`)
  const alert = page.getByRole('alert').filter({ hasText: 'There is no application named' })
  await alert.waitFor()
  check(true, `a missing app says so: ${await alert.textContent()}`)
})
