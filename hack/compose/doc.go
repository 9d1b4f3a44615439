// Package compose holds the files of the docker compose demo
// (docker-compose.yml at the repository's root): the tools image, the kind
// cluster's configuration, the scripts of the kind and install services,
// the overlay of the install manifests and the sample Applications. Its
// test loads docker-compose.yml with compose-go, the compose
// specification's own library, and checks it against the repository.
package compose
