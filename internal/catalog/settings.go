package catalog

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/internal/gqlmodel"
)

// settingsConfigMap holds graphcd's settings (Argo CD's argocd-cm keys).
const settingsConfigMap = "graphcd-cm"

// settingsTTL is how long PublicSettings reuses what it read.
const settingsTTL = 5 * time.Second

// Settings reads the public part of graphcd-cm: the URL, the UI banner and
// the names of the SSO connectors. Nothing else of the ConfigMap (client
// secrets in dex.config, say) ever leaves it.
type Settings struct {
	client    kubernetes.Interface
	namespace string

	mu   sync.Mutex
	read time.Time
	last gqlmodel.Settings
}

// NewSettings reads graphcd-cm in namespace.
func NewSettings(client kubernetes.Interface, namespace string) *Settings {
	return &Settings{client: client, namespace: namespace}
}

// PublicSettings returns the public settings, read at most every few
// seconds. A missing ConfigMap means defaults.
func (s *Settings) PublicSettings(ctx context.Context) (gqlmodel.Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.read.IsZero() && time.Since(s.read) < settingsTTL {
		return s.last, nil
	}
	cm, err := s.client.CoreV1().ConfigMaps(s.namespace).Get(ctx, settingsConfigMap, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		s.last = gqlmodel.Settings{}
	case err != nil:
		return gqlmodel.Settings{}, fmt.Errorf("read %s/%s: %w", s.namespace, settingsConfigMap, err)
	default:
		s.last = publicSettings(cm.Data)
	}
	s.read = time.Now()
	return s.last, nil
}

// publicSettings picks the public keys out of graphcd-cm's data.
func publicSettings(data map[string]string) gqlmodel.Settings {
	out := gqlmodel.Settings{
		URL:               data["url"],
		UIBannerContent:   data["ui.bannercontent"],
		UIBannerURL:       data["ui.bannerurl"],
		UIBannerPermanent: data["ui.bannerpermanent"] == "true",
		SSOProviders:      []string{},
	}
	var dex struct {
		Connectors []struct {
			Name string `json:"name"`
		} `json:"connectors"`
		EnablePasswordDB bool `json:"enablePasswordDB"`
	}
	if yaml.Unmarshal([]byte(data["dex.config"]), &dex) == nil {
		if dex.EnablePasswordDB {
			// Dex's own users (staticPasswords), which its login page
			// calls "Email".
			out.SSOProviders = append(out.SSOProviders, "Email")
		}
		for _, c := range dex.Connectors {
			if c.Name != "" {
				out.SSOProviders = append(out.SSOProviders, c.Name)
			}
		}
	}
	var oidc struct {
		Name string `json:"name"`
	}
	if yaml.Unmarshal([]byte(data["oidc.config"]), &oidc) == nil && oidc.Name != "" {
		out.SSOProviders = append(out.SSOProviders, oidc.Name)
	}
	return out
}
