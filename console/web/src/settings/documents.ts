// The GraphQL operations of the settings pages.
import { graphql } from '../gql'

export const RepositoryRowFragment = graphql(`
  fragment RepositoryRow on Repository {
    id
    name
    url
    project
    type
    hasCredentials
    template
  }
`)

export const ConnectionFragment = graphql(`
  fragment Connection on ConnectionState {
    status
    message
    attemptedAt
  }
`)

export const RepositoriesQuery = graphql(`
  query SettingsRepositories {
    repositories(first: 500) {
      totalCount
      nodes {
        ...RepositoryRow
      }
    }
  }
`)

// Asked apart from the list: the server may take a while to reach every
// repository, and the list should not wait for it.
export const RepositoryConnectionsQuery = graphql(`
  query SettingsRepositoryConnections {
    repositories(first: 500) {
      nodes {
        id
        url
        project
        template
        connectionState {
          ...Connection
        }
      }
    }
  }
`)

// The caller's rules on repositories: where it may create one (a role
// with create on team/* only may still add a repository to team).
export const RepositoryRightsQuery = graphql(`
  query SettingsRepositoryRights {
    me {
      permissions {
        resource
        action
        object
        effect
      }
    }
  }
`)

export const TestRepositoryMutation = graphql(`
  mutation SettingsTestRepository($url: String!, $project: String) {
    testRepository(url: $url, project: $project) {
      ...Connection
    }
  }
`)

export const CreateRepositoryMutation = graphql(`
  mutation SettingsCreateRepository($input: RepositoryInput!) {
    createRepository(input: $input) {
      ...RepositoryRow
    }
  }
`)

export const DeleteRepositoryMutation = graphql(`
  mutation SettingsDeleteRepository($url: String!, $template: Boolean!, $project: String) {
    deleteRepository(url: $url, template: $template, project: $project)
  }
`)

export const ClusterRowFragment = graphql(`
  fragment ClusterRow on Cluster {
    id
    name
    server
    namespaces
    clusterResources
    project
    shard
    labels {
      key
      value
    }
    info {
      serverVersion
      connectionState {
        status
        message
        attemptedAt
      }
      cacheInfo {
        resourcesCount
        apisCount
        lastCacheSyncTime
      }
      applicationsCount
    }
  }
`)

export const ComponentStatusQuery = graphql(`
  query SettingsComponentStatus {
    componentStatus {
      apiReplicas {
        id
        version
        lastSeen
        memory {
          ...ReplicaMemory
        }
      }
      controllers {
        id
        version
        shard
        leader
        clusters
        lastSeen
        memory {
          ...ReplicaMemory
        }
      }
      repoServer {
        name
        reachable
        message
      }
      redis {
        address
        reachable
        message
        version
        usedMemoryBytes
      }
      dex {
        name
        reachable
        message
      }
    }
  }
`)

export const ClustersQuery = graphql(`
  query SettingsClusters {
    clusters(first: 500) {
      totalCount
      nodes {
        ...ClusterRow
      }
    }
  }
`)

export const AddClusterMutation = graphql(`
  mutation SettingsAddCluster($input: ClusterInput!) {
    addCluster(input: $input) {
      ...ClusterRow
    }
  }
`)

export const RemoveClusterMutation = graphql(`
  mutation SettingsRemoveCluster($server: String!) {
    removeCluster(server: $server)
  }
`)

export const ProjectListQuery = graphql(`
  query SettingsProjects {
    projects(first: 500) {
      totalCount
      nodes {
        id
        name
        spec {
          description
          sourceRepos
          destinations {
            ...Destination
          }
          roles {
            name
          }
        }
      }
    }
  }
`)

// A project's whole object: the detail page edits its spec as YAML
// so fields it does not show survive a save.
export const ProjectQuery = graphql(`
  query SettingsProject($name: String!) {
    project(name: $name) {
      id
      name
      yaml
      links {
        ...Link
      }
      spec {
        roles {
          name
          jwtTokens {
            ...Token
          }
        }
      }
    }
  }
`)

export const CreateProjectMutation = graphql(`
  mutation SettingsCreateProject($input: CreateProjectInput!) {
    createProject(input: $input) {
      id
      name
    }
  }
`)

export const UpdateProjectSpecMutation = graphql(`
  mutation SettingsUpdateProjectSpec($input: UpdateProjectSpecInput!) {
    updateProjectSpec(input: $input) {
      id
      name
      yaml
    }
  }
`)

export const DeleteProjectMutation = graphql(`
  mutation SettingsDeleteProject($name: String!) {
    deleteProject(name: $name)
  }
`)

export const CreateProjectTokenMutation = graphql(`
  mutation SettingsCreateProjectToken($input: CreateProjectTokenInput!) {
    createProjectToken(input: $input) {
      ...IssuedToken
    }
  }
`)

export const DeleteProjectTokenMutation = graphql(`
  mutation SettingsDeleteProjectToken($project: String!, $role: String!, $id: String!) {
    deleteProjectToken(project: $project, role: $role, id: $id)
  }
`)

export const AccountsQuery = graphql(`
  query SettingsAccounts {
    accounts {
      name
      enabled
      capabilities
      passwordChangedAt
      tokens {
        ...Token
      }
    }
  }
`)

export const CreateAccountTokenMutation = graphql(`
  mutation SettingsCreateAccountToken($input: CreateAccountTokenInput!) {
    createAccountToken(input: $input) {
      ...IssuedToken
    }
  }
`)

export const DeleteAccountTokenMutation = graphql(`
  mutation SettingsDeleteAccountToken($account: String, $id: String!) {
    deleteAccountToken(account: $account, id: $id)
  }
`)

export const UserInfoQuery = graphql(`
  query SettingsUserInfo {
    me {
      ...Who
      email
      permissions {
        subject
        resource
        action
        object
        effect
      }
    }
  }
`)

export const UpdatePasswordMutation = graphql(`
  mutation SettingsUpdatePassword($input: UpdatePasswordInput!) {
    updatePassword(input: $input)
  }
`)

export const ReplicaMemoryFragment = graphql(`
  fragment ReplicaMemory on MemoryStatus {
    limitBytes
    liveHeapBytes
    pressure
    pressureSince
    waits
  }
`)
