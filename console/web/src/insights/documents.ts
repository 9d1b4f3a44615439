// The GraphQL operation of the Insights page and the application's Insights tab.
import { graphql } from '../gql'

export const InsightsQuery = graphql(`
  query Insights($scope: InsightsScope!, $name: String, $namespace: String, $from: Time!, $to: Time!, $bucket: InsightsBucket!) {
    insights(scope: $scope, name: $name, namespace: $namespace, from: $from, to: $to, bucket: $bucket) {
      applications
      total {
        ...DeliveryFiguresFields
      }
      series {
        ...DeliveryFiguresFields
      }
    }
  }

  fragment DeliveryFiguresFields on DeliveryFigures {
    start
    days
    deploys
    deploysPerDay
    failedDeploys
    changeFailureRate
    leadTimes
    leadTimeMedianSeconds
    leadTimeP90Seconds
    failures
    restores
    timeToRestoreMedianSeconds
    syncs
    syncDurationMedianSeconds
    syncDurationP90Seconds
    driftSeconds
  }
`)
