// End-to-end check of the console in a real browser: log in through the
// form, see the applications with their badges, filter by health and find
// the filter in the URL.
//
//   node e2e/login-and-list.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
//
// The server must hold the apps web (Synced, Healthy), db (OutOfSync,
// Degraded) and cache (Synced, Progressing), and USER may sync web but not
// cache. Exits non-zero on failure;
// screenshots of each step go to ARTIFACTS_DIR (default e2e/artifacts).
import { args, badges, login, row, run } from './browser.mjs'

const { base, user, password, artifacts } = args('login-and-list.mjs')

await run(artifacts, async (page, { shot, check }) => {
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

  await login(page, user, password)
  for (const name of ['web', 'db', 'cache']) await row(page, name).waitFor()
  check(true, 'after the login the list shows web, db and cache')
  await page.getByText('3 applications').waitFor()
  check(true, 'the total count says 3 applications')

  const want = { web: ['Synced', 'Healthy'], db: ['OutOfSync', 'Degraded'], cache: ['Synced', 'Progressing'] }
  for (const [name, statuses] of Object.entries(want)) {
    const got = await badges(page, name)
    check(JSON.stringify(got.slice(0, 2)) === JSON.stringify(statuses), `${name} shows ${statuses.join(' + ')} (got ${got.join(', ')})`)
  }
  // Sync buttons show only where me.can allows.
  await page.getByRole('button', { name: 'Sync web' }).waitFor()
  check(true, 'web, which USER may sync, has a Sync button')
  check((await page.getByRole('button', { name: 'Sync cache' }).count()) === 0, 'cache, which USER may not sync, has none')
  await shot('list')

  // Filter by health: the server filters, the URL says so.
  await page.locator('select[name="health"]').selectOption('Degraded')
  await page.waitForURL(/[?&]health=Degraded/)
  check(true, `the URL carries the filter: ${page.url()}`)
  await page.getByText('1 application', { exact: true }).waitFor()
  await row(page, 'db').waitFor()
  check((await row(page, 'web').count()) === 0 && (await row(page, 'cache').count()) === 0, 'only db is listed under health=Degraded')
  await shot('filtered')

  // The URL alone restores the view.
  await page.reload()
  await row(page, 'db').waitFor()
  check((await page.locator('select[name="health"]').inputValue()) === 'Degraded', 'a reload keeps the health filter')
  check((await row(page, 'web').count()) === 0, 'a reload keeps the list filtered')

  // Tiles show the same apps.
  await page.getByRole('button', { name: 'Tiles' }).click()
  await page.waitForURL(/[?&]view=tiles/)
  await page.locator('.tile[data-app="db"]').waitFor()
  check(true, 'the tiles view shows db')
  await shot('tiles')

  // The theme follows the system's colour scheme.
  const light = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)
  await page.emulateMedia({ colorScheme: 'dark' })
  // The console hears of the change through matchMedia's change event,
  // which arrives after emulateMedia returns.
  await page
    .waitForFunction((was) => getComputedStyle(document.documentElement).backgroundColor !== was, light, { timeout: 10_000 })
    .catch(() => {})
  const dark = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)
  check(light !== dark, `a dark system theme darkens the page (${light} -> ${dark})`)
  await shot('tiles-dark')

  // Search filters on the server as one types, and lands in the URL too.
  await page.locator('select[name="health"]').selectOption('')
  await page.getByRole('searchbox', { name: 'Search' }).fill('cach')
  await page.waitForURL((u) => u.searchParams.get('q') === 'cach' && !u.searchParams.has('health'))
  await page.locator('.tile[data-app="cache"]').waitFor()
  await page.locator('.tile[data-app="db"]').waitFor({ state: 'detached' })
  check(true, `searching "cach" lists only cache: ${page.url()}`)
})
