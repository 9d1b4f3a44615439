// Package remote serves a reposerver.Service over gRPC and provides the
// matching client, so rendering can run in separate repo-server workers
// (`graphcd repo-server`) while the API server and controller call them
// through the same Service interface they use in process.
//
// The gRPC service is declared by hand (no protoc): each Service method is
// a unary RPC, /graphcd.reposerver.v1.RepoServer/<Method>, whose messages
// are the Go types of package reposerver encoded as JSON. The codec is set
// per server and per call, so the process-wide codec registry is left
// alone, and the standard gRPC health service (protobuf) works beside it.
//
// A worker:
//
//	srv, err := remote.NewServer(local, remote.ServerOptions{
//		// no certificate: a self-signed one is generated
//		ClientCA: caPEM, // optional: require client certificates (mTLS)
//	})
//	go srv.Serve(lis)
//	defer srv.Shutdown(ctx)
//
// A caller:
//
//	c, err := remote.Dial("repo-server:8081", remote.ClientOptions{CACert: caPEM})
//	defer c.Close()
//	res, err := c.GenerateManifests(ctx, req) // c is a reposerver.Service
//
// Errors keep their meaning across the wire: the server maps the
// reposerver, git and render sentinel errors to gRPC status codes and a
// reason (google.rpc.ErrorInfo), and the client turns them back into
// errors that match the same sentinels with errors.Is. Messages are the
// Service's own, which never contain credentials; the server scrubs the
// request's secrets from them once more before they leave.
//
// Repository credentials travel inside requests, so they are only ever
// sent over TLS: a plaintext client refuses to send a request carrying
// credentials, and a plaintext server refuses to accept one.
package remote
