package admin

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/auth/session"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/kubeconn"
)

// newRotateSessionKeyCmd rotates the key that signs sessions and
// tokens, in the cluster.
func newRotateSessionKeyCmd(kubeconfig *string) *cobra.Command {
	var namespace string
	c := &cobra.Command{
		Use:   "rotate-session-key",
		Short: "Make a new key for signing sessions and tokens; the old one keeps verifying until the next rotation",
		Long: `Make a new current key for signing sessions and API tokens in the Secret
graphcd-secret of --namespace, keeping the old key as the previous one. Tokens
signed with the old key keep working until they expire or until the next
rotation, so nobody is logged out at once; rotating twice in a row logs
everyone out (and ends every API token). Every graphcd server picks the new
key up within seconds, without a restart.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			k, err := kubeconn.Connect(c.Context(), kubeconn.Options{Kubeconfig: *kubeconfig, Origin: command.FlagOrigin(c, "kubeconfig")})
			if err != nil {
				return err
			}
			kc, err := kubernetes.NewForConfig(k.Config)
			if err != nil {
				return err
			}
			if err := session.RotateKey(c.Context(), kc, namespace); err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "rotated the session key in %s/%s\n", namespace, session.SecretName)
			return err
		},
	}
	c.Flags().StringVar(&namespace, "namespace", "graphcd", "namespace of graphcd-secret")
	return c
}
