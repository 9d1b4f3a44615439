package wellknown

// The OAuth2 clients graphcd registers in its embedded Dex: its own, and
// the public client the CLI logs in with through a loopback redirect.
// Asking for the scope "audience:server:client_id:" + DexClientID gets
// the CLI an ID token graphcd accepts.
const (
	DexClientID    = "graphcd"
	DexCLIClientID = "graphcd-cli"
)
