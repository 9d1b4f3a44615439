// End-to-end check of the delivery insights: the Insights page (the
// installation's figures over 7 days) and the Insights tab of the app
// "shop", whose delivery log the Go test wrote (see TestInsightsPages
// for the history and the figures it must give).
//
//   node e2e/insights.mjs BASEURL USER PASSWORD [ARTIFACTS_DIR]
import { args, login, run } from './browser.mjs'

const { base, user, password, artifacts } = args('insights.mjs')

const want = {
  'deploy-frequency': ['0.43 / day', '3 deploys'],
  'lead-time': ['31 min', 'p90 1 h 12 min (3 with a commit time)'],
  'change-failure-rate': ['33 %', '1 of 3 deploys failed'],
  'time-to-restore': ['1 h', 'median of 1 restored; 1 failures'],
  'sync-duration': ['2 min', 'p90 4 min; 3 syncs'],
  drift: ['12 min', ''],
}

async function checkFigures(page, check, where) {
  for (const [id, [value, note]] of Object.entries(want)) {
    const card = page.locator(`.insight-card[data-figure="${id}"]`)
    const got = (await card.locator('.insight-value').textContent())?.trim()
    check(got === value, `${where}: ${id} is ${got}, want ${value}`)
    if (note) {
      const text = await card.textContent()
      check(text?.includes(note), `${where}: ${id} says "${note}" (${text})`)
    }
  }
  const bars = await page.locator('rect.bar-deploys').evaluateAll((els) => els.map((e) => Number(e.getAttribute('height')) > 0))
  check(bars.length === 7 && bars.join(',') === 'true,false,true,false,true,false,false', `${where}: one bar per day, deploys on days 1, 3 and 5 (${bars.join(',')})`)
  check((await page.locator('rect.bar-failed').count()) === 1, `${where}: one failed deploy drawn`)
  check((await page.locator('polyline.line-lead').count()) === 1, `${where}: the lead time line is drawn`)
}

await run(artifacts, async (page, { shot, check }) => {
  await page.goto(`${base}/login`)
  await login(page, user, password)
  await page.getByRole('link', { name: 'Insights', exact: true }).click()
  await page.waitForURL(/\/insights$/)
  await page.getByRole('heading', { name: 'Delivery insights' }).waitFor()
  await page.getByRole('button', { name: '7 days', exact: true }).click()
  await page.waitForURL(/days=7/)
  await page.getByText('1 application, per day').waitFor()
  await page.locator('.insight-card[data-figure="deploy-frequency"] .insight-value', { hasText: '0.43 / day' }).waitFor()
  await checkFigures(page, check, 'the Insights page')
  await shot('insights-dashboard')

  await page.getByRole('button', { name: '90 days', exact: true }).click()
  await page.getByText('1 application, per week').waitFor()
  // The label changes with the range; the bars once the query answers.
  await page.locator('rect.bar-deploys').nth(12).waitFor({ state: 'attached' })
  check((await page.locator('rect.bar-deploys').count()) === 13, '90 days show 13 weekly bars')

  await page.goto(`${base}/applications/shop?view=insights&days=7`)
  await page.getByRole('button', { name: 'Insights', exact: true, pressed: true }).waitFor()
  await page.locator('.insight-card[data-figure="deploy-frequency"] .insight-value', { hasText: '0.43 / day' }).waitFor()
  await checkFigures(page, check, "the app's Insights tab")
  await shot('insights-app-tab')
})
