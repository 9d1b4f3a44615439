// Measures the application page with a big resource tree: after logging
// in, how long a fresh load of the app takes until the graph shows its
// first laid-out nodes, how long "show more" takes to lay out the next
// batch, and the frame times (requestAnimationFrame deltas) while the
// graph is panned for about three seconds. Prints one JSON line of
// milliseconds; asserts nothing about speed.
//
//   APP=NAME TREE_SIZE=N node e2e/app-scale.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('app-scale.mjs')
const app = process.env.APP ?? 'scale'
const size = Number(process.env.TREE_SIZE ?? '2000')
const long = { timeout: 600_000 } // the controller first has to see every object

function stats(deltas) {
  const s = [...deltas].sort((a, b) => a - b)
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0
  return { median: at(0.5), p95: at(0.95), max: s.at(-1) ?? 0, frames: s.length }
}

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)
  await page.goto(`${base}/applications/${app}`)
  await page.getByText(`${size.toLocaleString('en-US')} resources`).waitFor(long)
  check(true, `the tree of ${app} holds ${size} resources`)

  // A fresh load, timed from navigation start (performance.now's origin).
  await page.goto(`${base}/applications/${app}`)
  await page.waitForFunction(() => document.querySelector('.graph[data-layout="done"] .react-flow__node') !== null, null, long)
  const treeMs = await page.evaluate(() => performance.now())
  const shown = await page.locator('.graph').getAttribute('data-nodes')
  const nodesInDom = await page.locator('.react-flow__node').count()
  check(Number(shown) <= 300, `the graph lays out ${shown} nodes of ${size + 1}, ${nodesInDom} of them in the DOM`)
  await shot('big-tree')

  // Frame times while panning with the mouse, as a user would drag.
  const pane = await page.locator('.react-flow__pane').boundingBox()
  const cx = pane.x + pane.width / 2
  const cy = pane.y + pane.height / 2
  const recording = page.evaluate(
    () =>
      new Promise((resolve) => {
        const deltas = []
        let last = performance.now()
        const end = last + 3000
        const tick = (t) => {
          deltas.push(t - last)
          last = t
          if (t < end) requestAnimationFrame(tick)
          else resolve(deltas)
        }
        requestAnimationFrame(tick)
      }),
  )
  await page.mouse.move(cx, cy)
  await page.mouse.down()
  const t0 = Date.now()
  for (let i = 0; Date.now() - t0 < 3000; i++) {
    await page.mouse.move(cx + 250 * Math.sin(i / 10), cy + 150 * Math.cos(i / 7))
  }
  await page.mouse.up()
  const pan = stats((await recording).slice(1))
  check(pan.frames > 0, `recorded ${pan.frames} frames while panning`)

  // The next batch of nodes, laid out in the worker.
  const before = Number(shown)
  const more = page.getByRole('button', { name: /^Show [\d,]+ more$/ })
  const t1 = await page.evaluate(() => performance.now())
  await more.click()
  await page.waitForFunction((n) => Number(document.querySelector('.graph')?.getAttribute('data-nodes')) > n && document.querySelector('.graph')?.getAttribute('data-layout') === 'done', before, long)
  const moreMs = (await page.evaluate(() => performance.now())) - t1
  const after = await page.locator('.graph').getAttribute('data-nodes')
  check(Number(after) > before, `"show more" lays out ${after} nodes`)

  // The table lists all of them, rendering only what is in view.
  await page.getByRole('button', { name: 'Table', exact: true }).click()
  await page.locator('.rtable [role="rowgroup"] [role="row"]').first().waitFor()
  const rows = await page.locator('.rtable [role="rowgroup"] [role="row"]').count()
  check(rows < 100, `the table renders ${rows} rows of ${size}`)

  console.log(
    JSON.stringify({ size, treeMs: Math.round(treeMs), moreMs: Math.round(moreMs), panMedianMs: pan.median, panP95Ms: pan.p95, panMaxMs: pan.max, frames: pan.frames }),
  )
})
