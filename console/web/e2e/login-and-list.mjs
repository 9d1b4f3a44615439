// End-to-end check of the console in a real browser (Debian chromium driven
// by playwright-core): log in through the form, see the applications with
// their badges, filter by health and find the filter in the URL.
//
//   node e2e/login-and-list.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
//
// The server must hold the apps web (Synced, Healthy), db (OutOfSync,
// Degraded) and cache (Synced, Progressing). Exits non-zero on failure;
// screenshots of each step go to ARTIFACTS_DIR (default e2e/artifacts).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'

const [base, user, password, artifacts = new URL('./artifacts/', import.meta.url).pathname] = process.argv.slice(2)
if (!base || !user || !password) {
  console.error('usage: node e2e/login-and-list.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]')
  process.exit(2)
}
mkdirSync(artifacts, { recursive: true })

const profile = mkdtempSync(join(tmpdir(), 'graphcd-e2e-'))
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
  viewport: { width: 1280, height: 800 },
})
const page = context.pages()[0] ?? (await context.newPage())
const pageErrors = []
page.on('pageerror', (e) => pageErrors.push(String(e)))
page.setDefaultTimeout(15_000)

let step = 0
async function shot(name) {
  step++
  await page.screenshot({ path: join(artifacts, `${String(step).padStart(2, '0')}-${name}.png`), fullPage: true })
}

function check(ok, what) {
  if (!ok) throw new Error(what)
  console.log(`ok: ${what}`)
}

const row = (name) => page.locator(`[role="row"][data-app="${name}"]`)
async function badges(name) {
  return row(name).locator('.badge').evaluateAll((els) => els.map((e) => e.getAttribute('data-status')))
}

let failed = false
try {
  // Not logged in: the list sends the visitor to the login page.
  await page.goto(`${base}/applications`)
  await page.waitForURL(/\/login\?return=/)
  check(true, 'an anonymous visit to /applications lands on /login')
  await shot('login')

  // A wrong password shows the server's reason.
  await page.getByLabel('Username').fill(user)
  await page.getByLabel('Password').fill(`${password}-wrong`)
  await page.getByRole('button', { name: 'Log in', exact: true }).click()
  const alert = page.getByRole('alert')
  await alert.waitFor()
  const reason = (await alert.textContent()) ?? ''
  check(/invalid|password/i.test(reason), `a wrong password shows the server's error: "${reason}"`)
  await shot('login-error')

  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Log in', exact: true }).click()
  await page.waitForURL(/\/applications$/)
  for (const name of ['web', 'db', 'cache']) await row(name).waitFor()
  check(true, 'after the login the list shows web, db and cache')
  await page.getByText('3 applications').waitFor()
  check(true, 'the total count says 3 applications')

  const want = { web: ['Synced', 'Healthy'], db: ['OutOfSync', 'Degraded'], cache: ['Synced', 'Progressing'] }
  for (const [name, statuses] of Object.entries(want)) {
    const got = await badges(name)
    check(JSON.stringify(got.slice(0, 2)) === JSON.stringify(statuses), `${name} shows ${statuses.join(' + ')} (got ${got.join(', ')})`)
  }
  await shot('list')

  // Filter by health: the server filters, the URL says so.
  await page.locator('select[name="health"]').selectOption('Degraded')
  await page.waitForURL(/[?&]health=Degraded/)
  check(true, `the URL carries the filter: ${page.url()}`)
  await page.getByText('1 application', { exact: true }).waitFor()
  await row('db').waitFor()
  check((await row('web').count()) === 0 && (await row('cache').count()) === 0, 'only db is listed under health=Degraded')
  await shot('filtered')

  // The URL alone restores the view.
  await page.reload()
  await row('db').waitFor()
  check((await page.locator('select[name="health"]').inputValue()) === 'Degraded', 'a reload keeps the health filter')
  check((await row('web').count()) === 0, 'a reload keeps the list filtered')

  // Tiles show the same apps.
  await page.getByRole('button', { name: 'Tiles' }).click()
  await page.waitForURL(/[?&]view=tiles/)
  await page.locator('.tile[data-app="db"]').waitFor()
  check(true, 'the tiles view shows db')
  await shot('tiles')

  check(pageErrors.length === 0, `no uncaught errors in the page${pageErrors.length ? `: ${pageErrors.join('; ')}` : ''}`)
} catch (e) {
  failed = true
  console.error(`FAIL: ${e instanceof Error ? e.message : e}`)
  await shot('failure').catch(() => undefined)
} finally {
  await context.close()
  rmSync(profile, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
