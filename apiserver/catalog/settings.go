package catalog

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// settingsConfigMap holds graphcd's settings (Argo CD's argocd-cm keys).
const settingsConfigMap = wellknown.SettingsConfigMap

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
	last model.Settings
	// maxPayload is webhook.maxPayloadSizeMB in bytes; 0 when unset or
	// invalid.
	maxPayload int64
}

// NewSettings reads graphcd-cm in namespace.
func NewSettings(client kubernetes.Interface, namespace string) *Settings {
	return &Settings{client: client, namespace: namespace}
}

// PublicSettings returns the public settings, read at most every few
// seconds. A missing ConfigMap means defaults.
func (s *Settings) PublicSettings(ctx context.Context) (model.Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(ctx); err != nil {
		return model.Settings{}, err
	}
	return s.last, nil
}

// WebhookMaxPayloadBytes is graphcd-cm's webhook.maxPayloadSizeMB (Argo
// CD's key) in bytes, or def when it is unset, not a positive whole number
// of megabytes, or the ConfigMap cannot be read.
func (s *Settings) WebhookMaxPayloadBytes(ctx context.Context, def int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refresh(ctx) != nil || s.maxPayload <= 0 {
		return def
	}
	return s.maxPayload
}

// refresh reads graphcd-cm when the last read is older than settingsTTL;
// s.mu is held.
func (s *Settings) refresh(ctx context.Context) error {
	if !s.read.IsZero() && time.Since(s.read) < settingsTTL {
		return nil
	}
	cm, err := s.client.CoreV1().ConfigMaps(s.namespace).Get(ctx, settingsConfigMap, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		s.last, s.maxPayload = model.Settings{}, 0
	case err != nil:
		return fmt.Errorf("read %s/%s: %w", s.namespace, settingsConfigMap, err)
	default:
		s.last, s.maxPayload = publicSettings(cm.Data), maxPayloadBytes(cm.Data["webhook.maxPayloadSizeMB"])
	}
	s.read = time.Now()
	return nil
}

// maxPayloadBytes parses a size in megabytes (MiB, as Argo CD counts
// them); 0 for anything but a whole number from 1 to 1 TiB.
func maxPayloadBytes(mb string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(mb), 10, 64)
	if err != nil || n < 1 || n > 1<<20 {
		return 0
	}
	return n << 20
}

// publicSettings picks the public keys out of graphcd-cm's data.
func publicSettings(data map[string]string) model.Settings {
	out := model.Settings{
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
