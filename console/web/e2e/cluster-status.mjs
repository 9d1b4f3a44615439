// End-to-end check of cluster and component status: Settings → Clusters
// shows in-cluster Successful with its Kubernetes version, as the
// server's controller reported it, and the admin sees the components: this
// API replica, the controller leading shard 0 with its heap against its
// memory limit, and the repository server reachable.
//
//   node e2e/cluster-status.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('cluster-status.mjs')
const slow = { timeout: 60_000 } // the controller reports every 10 s

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)
  await page.goto(`${base}/settings/clusters`)
  const inCluster = page.locator('li[data-server="https://kubernetes.default.svc"]')
  // The page loads once; reload until the controller's first report is in.
  for (let i = 0; ; i++) {
    try {
      await inCluster.locator('[data-connection="ok"]').waitFor({ timeout: 5_000 })
      break
    } catch (e) {
      if (i >= 12) throw e
      await page.reload()
    }
  }
  const text = (await inCluster.textContent()) ?? ''
  check(/Successful/.test(text) && /Kubernetes v1\.\d+/.test(text) && /resources, \d+ APIs cached/.test(text),
    `in-cluster shows its connection, version and cache: ${text.trim()}`)

  const components = page.getByRole('list', { name: 'Components' })
  await components.locator('[data-component="controller"]').first().waitFor(slow)
  const ctl = (await components.locator('[data-component="controller"]').first().textContent()) ?? ''
  check(/shard 0 · leader/.test(ctl) && ctl.includes('https://kubernetes.default.svc'), `the controller leads shard 0 with in-cluster's cache: ${ctl.trim()}`)
  check(/heap \d+ of 1024 MiB/.test(ctl), `the controller shows its heap against its memory limit: ${ctl.trim()}`)
  check((await components.locator('[data-component="api"]').count()) === 1, 'one API server replica is listed')
  check((await components.locator('[data-component="Repository server"] [data-connection="ok"]').count()) === 1, 'the repository server is reachable')
  await shot('cluster-status')
})
