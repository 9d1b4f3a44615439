package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/kubeconn"
	"github.com/graphcd/graphcd/config/crd"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/eventbus"
	"github.com/graphcd/graphcd/internal/pushrelay"
	"github.com/graphcd/graphcd/internal/settings"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/cache"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/repocreds"
)

// settingsConfigMap is graphcd's settings ConfigMap (argocd-cm's keys).
const settingsConfigMap = wellknown.SettingsConfigMap

// runController waits until the CRDs are served, then runs the Application
// controller until ctx ends. cfg comes from the flags with Repo (in
// process, or a repo-server) and Logger set; runController adds the
// Kubernetes connection, graphcd-cm and repository credentials.
func runController(ctx context.Context, k *kubeconn.Conn, cfg controller.Config, events eventbus.Bus, started func(*controller.Controller)) error {
	log, namespace := cfg.Logger, cfg.Namespace
	for {
		err := crd.Established(ctx, k.APIExt)
		if err == nil {
			break
		}
		if !errors.Is(err, crd.ErrNotEstablished) {
			log.Warn("controller waits for the CRDs", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
		}
	}
	clients, err := kubernetes.NewForConfig(k.Config)
	if err != nil {
		return err
	}
	s, err := loadClusterSettings(ctx, clients, namespace)
	if err != nil {
		return err
	}
	creds := repocreds.New(clients, namespace)
	cfg.RESTConfig, cfg.Settings, cfg.RepoFor = k.Config, s, creds.Lookup
	// The source hydrator pushes from the controller, with write
	// credentials only, in memory (no working copies on disk).
	cfg.WriteRepoFor, cfg.Committer = creds.LookupWrite, git.New(git.Options{Logger: log})
	ctl, err := controller.New(cfg)
	if err != nil {
		return err
	}
	if events != nil {
		go forwardEvents(ctx, ctl, events, log)
	}
	if started != nil {
		started(ctl)
	}
	log.Info("application controller starting", "namespace", namespace, "resync", cfg.Resync)
	return ctl.Run(ctx)
}

// pushQueue hands a webhook's matched apps to the controller running in
// this process, once it exists (see webhook.Queue).
type pushQueue struct {
	ctl atomic.Pointer[controller.Controller]
}

func (q *pushQueue) RefreshPushed(ctx context.Context, apps []types.NamespacedName) ([]types.NamespacedName, error) {
	ctl := q.ctl.Load()
	if ctl == nil {
		return apps, nil // not started yet: the annotation reaches it later
	}
	return ctl.RefreshPushed(ctx, apps)
}

// servePushes returns the controller's start hook that receives, once it
// leads its shard, the apps webhook pushes matched on other replicas
// (pushrelay); then is called first, when not nil.
func servePushes(ctx context.Context, sh *shared, log *slog.Logger, then func(*controller.Controller)) (func(*controller.Controller), error) {
	relay, err := pushrelay.New(sh.redis, sh.secret, log)
	if err != nil {
		return nil, err
	}
	return func(ctl *controller.Controller) {
		if then != nil {
			then(ctl)
		}
		go relay.Serve(ctx, ctl.Elected(), ctl)
	}, nil
}

// loadClusterSettings reads graphcd-cm, or returns the defaults when it
// does not exist.
func loadClusterSettings(ctx context.Context, clients kubernetes.Interface, namespace string) (*settings.Settings, error) {
	cm, err := clients.CoreV1().ConfigMaps(namespace).Get(ctx, settingsConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return settings.Parse(nil)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s/%s: %w", namespace, settingsConfigMap, err)
	}
	s, err := settings.Parse(cm.Data)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", namespace, settingsConfigMap, err)
	}
	return s, nil
}

// localRepoServer renders in this process's repository server (each render
// in a worker process when worker is set), with a memory manifest cache
// signed by a key of this process. Renders in progress stop when ctx ends.
// The returned func removes its work directory.
func localRepoServer(ctx context.Context, log *slog.Logger, worker *inproc.WorkerOptions) (reposerver.Service, func(), error) {
	work, err := os.MkdirTemp("", "graphcd-repo-")
	if err != nil {
		return nil, nil, err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, nil, err
	}
	c, err := cache.New(cache.NewMemory(256<<20), cache.Options{Secret: secret, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	svc, err := inproc.New(inproc.Options{WorkDir: work, Cache: c, Logger: log, Worker: worker})
	if err != nil {
		return nil, nil, err
	}
	stop := context.AfterFunc(ctx, svc.Close)
	return svc, func() {
		stop()
		svc.Close()
		_ = os.RemoveAll(work)
	}, nil
}
