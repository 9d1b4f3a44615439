// Shared pieces of the browser scripts: Debian chromium through
// playwright-core with the flags this machine needs, a fresh profile,
// numbered screenshots, checks that print what they verified, and the
// login through the form.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'

/** args reads BASEURL USER PASSWORD [ARTIFACTS_DIR] or exits with the usage. */
export function args(script) {
  const [base, user, password, artifacts = new URL('./artifacts/', import.meta.url).pathname] = process.argv.slice(2)
  if (!base || !user || !password) {
    console.error(`usage: node e2e/${script} BASEURL USER PASSWORD [ARTIFACTS_DIR]`)
    process.exit(2)
  }
  mkdirSync(artifacts, { recursive: true })
  return { base, user, password, artifacts }
}

/** run opens a browser, runs steps(page, tools) and exits 0, or 1 on the first failure. */
export async function run(artifacts, steps) {
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
      // graphcd serves its self-signed certificate: trust exactly its key.
      ...(process.env.GRAPHCD_E2E_TRUST_SPKI
        ? [`--ignore-certificate-errors-spki-list=${process.env.GRAPHCD_E2E_TRUST_SPKI}`]
        : []),
    ],
    viewport: { width: 1280, height: 800 },
  })
  const page = context.pages()[0] ?? (await context.newPage())
  const pageErrors = []
  page.on('pageerror', (e) => pageErrors.push(String(e)))
  // Generous: make test runs these beside every other package's tests on
  // a small machine, where one GraphQL round trip can take seconds.
  page.setDefaultTimeout(60_000)

  let step = 0
  const shot = async (name) => {
    step++
    await page.screenshot({ path: join(artifacts, `${String(step).padStart(2, '0')}-${name}.png`), fullPage: true })
  }
  let failed = false
  try {
    await steps(page, { shot, check })
    check(pageErrors.length === 0, `no uncaught errors in the page${pageErrors.length ? `: ${pageErrors.join('; ')}` : ''}`)
  } catch (e) {
    failed = true
    console.error(`FAIL: ${e instanceof Error ? e.message : e}`)
    const alerts = await page
      .getByRole('alert')
      .allTextContents()
      .catch(() => [])
    if (alerts.length > 0) console.error(`the page says: ${alerts.join(' | ')}`)
    await shot('failure').catch(() => undefined)
  } finally {
    await context.close()
    rmSync(profile, { recursive: true, force: true })
  }
  process.exit(failed ? 1 : 0)
}

export function check(ok, what) {
  if (!ok) throw new Error(what)
  console.log(`ok: ${what}`)
}

/** login fills the login form and waits for the applications list. */
export async function login(page, user, password) {
  await page.getByLabel('Username').fill(user)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Log in', exact: true }).click()
  await page.waitForURL(/\/applications$/)
}

/** row is the table row of an application. */
export function row(page, name) {
  return page.locator(`[role="row"][data-app="${name}"]`)
}

/** badges lists the statuses a row's badges show. */
export async function badges(page, name) {
  return row(page, name)
    .locator('.badge')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-status')))
}
