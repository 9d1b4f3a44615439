// End-to-end check of the web terminal against a server running its
// controller, with exec.enabled: admin opens a terminal into the Pod of
// the app "shell" and runs a command; logging out revokes the session's
// token, and the server closes the terminal saying so; the account
// viewer (no exec permission) is refused, and the page says why.
//
//   VIEWER_PASSWORD=... node e2e/terminal.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('terminal.mjs')
const viewerPassword = process.env.VIEWER_PASSWORD
if (!viewerPassword) {
  console.error('VIEWER_PASSWORD must be the password of the account viewer')
  process.exit(2)
}
const slow = { timeout: 120_000 } // the controller clones, syncs and waits for the Pod

/** openTerminal opens the app's Pod in the resource panel and connects its terminal. */
async function openTerminal(page) {
  const link = page.getByRole('link', { name: 'shell', exact: true })
  await link.waitFor()
  await link.click()
  await page.waitForURL(/\/applications\/shell$/)
  const pod = page.locator('.graph .rnode[data-kind="Pod"] button.rname')
  await pod.waitFor(slow)
  await pod.click()
  await page.getByRole('tab', { name: 'Terminal' }).click()
  // The container's name comes from the Pod's live manifest.
  await page.waitForFunction(() => document.querySelector('.terminal input')?.value === 'app')
  await page.getByRole('button', { name: 'Connect' }).click()
}

await run(artifacts, async (page, { shot, check }) => {
  // What the server sends on the terminal's socket, as the browser got it.
  const frames = []
  let socketClosed = false
  page.on('websocket', (ws) => {
    if (!ws.url().includes('/api/terminal')) return
    ws.on('framereceived', (f) => frames.push(String(f.payload)))
    ws.on('close', () => {
      socketClosed = true
    })
  })

  await page.goto(`${base}/login`)
  await login(page, user, password)
  await openTerminal(page)
  const status = page.locator('.terminal-status')
  await status.filter({ hasText: 'Connected to app.' }).waitFor()
  check(true, 'the terminal connects to the container app of the Pod')

  const screen = page.locator('.terminal-screen .xterm-rows')
  await page.locator('.terminal-screen').click()
  await page.keyboard.type('echo graphcd-$((6*7))')
  await page.keyboard.press('Enter')
  // The typed line shows $((6*7)); only the shell's output shows 42.
  await screen.filter({ hasText: 'graphcd-42' }).waitFor()
  check(true, 'a command typed in the terminal runs in the container and its output shows')
  await shot('terminal')

  await page.evaluate(() => fetch('/auth/logout', { method: 'POST', credentials: 'same-origin' }))
  const deadline = Date.now() + 30_000
  while (!socketClosed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  check(socketClosed, 'the server closes the terminal once the session token is revoked')
  check(
    frames.some((f) => f.includes('your session ended: token revoked')),
    'the terminal is told why it closed: the token was revoked',
  )

  await page.goto(`${base}/login`)
  await login(page, 'viewer', viewerPassword)
  await openTerminal(page)
  await status.filter({ hasText: 'Closed: permission denied: exec create default/shell.' }).waitFor()
  check(true, 'without the exec permission the terminal is refused and the page says why')
  await shot('refused')
})
