package localcluster

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"time"
)

// component returns the running process of the component name, and its
// index in c.procs.
func (c *Cluster) component(name string) (*Process, int, error) {
	for i, p := range c.procs {
		if p.Name == name && !p.Exited() {
			return p, i, nil
		}
	}
	return nil, 0, fmt.Errorf("no running %s", name)
}

// RestartAPIServer stops kube-apiserver (SIGTERM, as a rollout does) and
// starts it again on the same port with the same certificates, returning
// once it is ready. Clients keep their configuration: they see their
// connections drop and the server come back. For fault tests.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	if err := c.StopAPIServer(); err != nil {
		return err
	}
	return c.StartAPIServer(ctx)
}

// StopAPIServer stops kube-apiserver (SIGTERM): connections to the
// cluster are refused until StartAPIServer, as for a cluster that went
// away. For fault tests.
func (c *Cluster) StopAPIServer() error {
	p, i, err := c.component("kube-apiserver")
	if err != nil {
		return err
	}
	p.Stop(30 * time.Second)
	c.procs = slices.Delete(c.procs, i, i+1)
	return nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the
// same port with the same certificates, and returns once it is ready.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	if _, _, err := c.component("kube-apiserver"); err == nil {
		return fmt.Errorf("kube-apiserver is running")
	}
	return c.runAPIServer(ctx)
}

// PauseEtcd stops etcd (SIGSTOP): it keeps its connections open and
// answers nothing, as a stalled disk or a long pause does, until
// ResumeEtcd. For fault tests.
func (c *Cluster) PauseEtcd() error { return c.signal("etcd", syscall.SIGSTOP) }

// ResumeEtcd continues an etcd that PauseEtcd stopped.
func (c *Cluster) ResumeEtcd() error { return c.signal("etcd", syscall.SIGCONT) }

func (c *Cluster) signal(name string, sig syscall.Signal) error {
	p, _, err := c.component(name)
	if err != nil {
		return err
	}
	return syscall.Kill(p.PID(), sig)
}
