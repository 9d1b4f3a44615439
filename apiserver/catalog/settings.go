package catalog

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/apiserver/deeplinks"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/kubewatch"
	"github.com/graphcd/graphcd/internal/settings"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/reposerver"
)

// Settings reads the public part of graphcd-cm: the URL, the UI banner and
// the names of the SSO connectors. Nothing else of the ConfigMap (client
// secrets in dex.config, say) ever leaves it. It follows graphcd-cm
// through the process's kubewatch.Source.
type Settings struct {
	// Logger, when set, hears why a part of graphcd-cm is left out (deep
	// links that do not compile), once per change.
	Logger *slog.Logger
	// Followers, set before Start, get graphcd-cm's data on each change
	// (nil while it is missing), in the order of the changes: parts of
	// the API that compile their own view of it (resource actions).
	Followers []func(data map[string]string)

	watch *kubewatch.Source
	// view is what graphcd-cm last said; nil until Start has read it.
	view atomic.Pointer[settingsView]
}

type settingsView struct {
	public model.Settings
	// maxPayload is webhook.maxPayloadSizeMB in bytes; 0 when unset or
	// invalid.
	maxPayload int64
	// tools are the settings renders carry to the repository server.
	tools reposerver.ToolOptions
	// statusBadge is statusbadge.enabled.
	statusBadge bool
	// exec is exec.enabled and exec.shells.
	exec ExecSettings
	// appLinks and projectLinks are application.links and project.links;
	// linksErr why either is invalid (and so empty).
	appLinks, projectLinks, resourceLinks []deeplinks.Rule
	linksErr                              error
}

// NewSettings reads graphcd-cm in the namespace of watch; call Start.
func NewSettings(watch *kubewatch.Source) *Settings {
	return &Settings{watch: watch}
}

// Start follows graphcd-cm until ctx ends, and returns once it has been
// read. A missing ConfigMap means defaults.
func (s *Settings) Start(ctx context.Context) error {
	err := s.watch.ConfigMap(ctx, wellknown.SettingsConfigMap, func(cm *corev1.ConfigMap) {
		if cm == nil {
			s.view.Store(&settingsView{exec: execSettings(nil)})
			for _, f := range s.Followers {
				f(nil)
			}
			return
		}
		v := &settingsView{
			public: publicSettings(cm.Data), maxPayload: maxPayloadBytes(cm.Data["webhook.maxPayloadSizeMB"]),
			tools: reposerver.ToolOptions{
				HelmValuesFileSchemes: settings.ValuesFileSchemes(cm.Data[settings.KeyValuesFileSchemes]),
				KustomizeBuildOptions: strings.TrimSpace(cm.Data[settings.KeyKustomizeBuildOptions]),
			},
			exec: execSettings(cm.Data),
		}
		v.statusBadge = v.public.StatusBadgeEnabled
		var appErr, projErr, resErr error
		v.appLinks, appErr = deeplinks.Parse("application.links", cm.Data["application.links"])
		v.projectLinks, projErr = deeplinks.Parse("project.links", cm.Data["project.links"])
		v.resourceLinks, resErr = deeplinks.Parse("resource.links", cm.Data["resource.links"])
		v.linksErr = errors.Join(appErr, projErr, resErr)
		s.view.Store(v)
		for _, f := range s.Followers {
			f(cm.Data)
		}
		if s.Logger != nil && v.linksErr != nil {
			s.Logger.Warn("graphcd-cm: deep links are left out", "err", v.linksErr)
		}
	})
	if err != nil {
		return err
	}
	s.view.CompareAndSwap(nil, &settingsView{exec: execSettings(nil)}) // read, and missing
	return nil
}

// errSettingsNotLoaded is PublicSettings' error before Start has read
// graphcd-cm.
var errSettingsNotLoaded = errors.New("settings are not loaded yet")

// PublicSettings returns the public settings.
func (s *Settings) PublicSettings(context.Context) (model.Settings, error) {
	v := s.view.Load()
	if v == nil {
		return model.Settings{}, errSettingsNotLoaded
	}
	return v.public, nil
}

// WebhookMaxPayloadBytes is graphcd-cm's webhook.maxPayloadSizeMB (Argo
// CD's key) in bytes, or def when it is unset, not a positive whole number
// of megabytes, or graphcd-cm is not loaded yet.
func (s *Settings) WebhookMaxPayloadBytes(_ context.Context, def int64) int64 {
	if v := s.view.Load(); v != nil && v.maxPayload > 0 {
		return v.maxPayload
	}
	return def
}

// DeepLinks are graphcd-cm's application.links, project.links and
// resource.links, and why they are empty when any is invalid.
func (s *Settings) DeepLinks() (app, project, resource []deeplinks.Rule, err error) {
	v := s.view.Load()
	if v == nil {
		return nil, nil, nil, nil
	}
	return v.appLinks, v.projectLinks, v.resourceLinks, v.linksErr
}

// StatusBadgeEnabled is graphcd-cm's statusbadge.enabled (Argo CD's
// key): whether /api/badge shows apps' status to anyone.
func (s *Settings) StatusBadgeEnabled() bool {
	v := s.view.Load()
	return v != nil && v.statusBadge
}

// DefaultExecShells are the shells a terminal tries, in this order, when
// graphcd-cm names none (Argo CD's default).
var DefaultExecShells = []string{"bash", "sh", "powershell", "cmd"}

// ExecSettings are graphcd-cm's exec.enabled and exec.shells (Argo CD's
// keys): whether the console's terminal may run shells in pods at all,
// and which shells it tries, in order.
type ExecSettings struct {
	Enabled bool
	Shells  []string
}

// Exec returns the terminal's settings; off until graphcd-cm is read.
func (s *Settings) Exec() ExecSettings {
	if v := s.view.Load(); v != nil {
		return v.exec
	}
	return ExecSettings{Shells: DefaultExecShells}
}

// execSettings reads exec.enabled and exec.shells (a comma-separated
// list; empty names are dropped, and no name at all means
// DefaultExecShells).
func execSettings(data map[string]string) ExecSettings {
	e := ExecSettings{Enabled: strings.TrimSpace(data["exec.enabled"]) == "true"}
	for sh := range strings.SplitSeq(data["exec.shells"], ",") {
		if sh = strings.TrimSpace(sh); sh != "" {
			e.Shells = append(e.Shells, sh)
		}
	}
	if len(e.Shells) == 0 {
		e.Shells = DefaultExecShells
	}
	return e
}

// ToolOptions are the settings the API's renders (the manifests query)
// send to the repository server, as the controller's do: the same
// helm.valuesFileSchemes and kustomize.buildOptions.
func (s *Settings) ToolOptions() reposerver.ToolOptions {
	if v := s.view.Load(); v != nil {
		return v.tools
	}
	return reposerver.ToolOptions{}
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
		// Public so the console offers badge snippets only when they work.
		StatusBadgeEnabled: strings.TrimSpace(data["statusbadge.enabled"]) == "true",
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
