package conformance

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nacos-group/nacos-sdk-go/clients"
	"github.com/nacos-group/nacos-sdk-go/clients/config_client"
	"github.com/nacos-group/nacos-sdk-go/clients/naming_client"
	"github.com/nacos-group/nacos-sdk-go/common/constant"
	"github.com/nacos-group/nacos-sdk-go/vo"
)

// nacos-sdk-go v1.1.6 with Username/Password: it logs in when a client is
// created and again every tokenTtl - tokenTtl/10 s.

func (a *authRun) sdkParams(s *Server, user, password, role string) (vo.NacosClientParam, error) {
	if err := loopbackOnly(); err != nil {
		return vo.NacosClientParam{}, fmt.Errorf("conformance: sdk-go filter: %w", err)
	}
	dir := filepath.Join(a.env.Work, "auth", "sdkgo-"+s.Name+"-"+role)
	cc := constant.ClientConfig{TimeoutMs: 5000, NotLoadCacheAtStart: true, LogDir: dir + "/log", CacheDir: dir + "/cache",
		LogLevel: "warn", UpdateCacheWhenEmpty: true, NamespaceId: a.ns().Apps, Username: user, Password: password}
	sc := []constant.ServerConfig{{IpAddr: "127.0.0.1", Port: uint64(s.Port), ContextPath: "/nacos"}}
	return vo.NacosClientParam{ClientConfig: &cc, ServerConfigs: sc}, nil
}

func (a *authRun) sdkConfig(s *Server, user, password, role string) (config_client.IConfigClient, error) {
	p, err := a.sdkParams(s, user, password, role)
	if err != nil {
		return nil, err
	}
	return clients.NewConfigClient(p)
}

func (a *authRun) sdkNaming(s *Server, user, password, role string) (naming_client.INamingClient, error) {
	p, err := a.sdkParams(s, user, password, role)
	if err != nil {
		return nil, err
	}
	return clients.NewNamingClient(p)
}

// runSDKGo runs the sdk-go scenarios at once (the expiry ones wait).
func (a *authRun) runSDKGo(s *Server) {
	type sc struct {
		name string
		run  func(*Server) (time.Duration, string, error)
	}
	var wg sync.WaitGroup
	for _, c := range []sc{
		{"config.login", a.sdkConfigLogin}, {"config.badpassword", a.sdkBadPassword}, {"config.readonly", a.sdkReadOnly},
		{"config.expiry", a.sdkConfigExpiry}, {"naming.expiry", a.sdkNamingExpiry},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, detail, err := c.run(s)
			a.add(s, "sdkgo/"+c.name, d, detail, err)
		}()
	}
	wg.Wait()
}

func (a *authRun) sdkConfigLogin(s *Server) (time.Duration, string, error) {
	t0 := time.Now()
	c, err := a.sdkConfig(s, "app-rw", a.users["app-rw"], "login")
	if err != nil {
		return 0, "", err
	}
	d := time.Since(t0)
	id := "sdkgo.auth.login." + a.env.RunID
	if err := publishEventually(c, id, "v1"); err != nil {
		return 0, "", fmt.Errorf("publish: %w", err)
	}
	if _, err := readable(c, id, "DEFAULT_GROUP", "v1"); err != nil {
		return 0, "", err
	}
	return d, "client created (login); publish and read in the apps namespace", nil
}

// publishEventually retries a fresh client's first publish for 20 s: its
// login at creation may have timed out on a loaded server (it logs in
// again every 5 s then; apps retry the same way).
func publishEventually(c config_client.IConfigClient, id, content string) error {
	_, err := eventually(20*time.Second, func() error {
		ok, err := c.PublishConfig(vo.ConfigParam{DataId: id, Group: "DEFAULT_GROUP", Content: content})
		if err == nil && !ok {
			err = errors.New("publish answered false")
		}
		return err
	})
	return err
}

// refused403 reports whether an sdk-go error is the server's refusal (403
// as Java; 429 once nacosd's throttle locked the failing user out).
func refused403(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), "429") || strings.Contains(err.Error(), "forbidden"))
}

func (a *authRun) sdkBadPassword(s *Server) (time.Duration, string, error) {
	c, err := a.sdkConfig(s, "app-bad", "not-the-password", "bad")
	if err != nil {
		return 0, "", err
	}
	ok, err := c.PublishConfig(vo.ConfigParam{DataId: "sdkgo.auth.bad." + a.env.RunID, Group: "DEFAULT_GROUP", Content: "x"})
	if ok || !refused403(err) {
		return 0, "", fmt.Errorf("publish with a wrong password: %v %v", ok, err)
	}
	if got, err := c.GetConfig(vo.ConfigParam{DataId: "cfg1", Group: "G1"}); !refused403(err) {
		return 0, "", fmt.Errorf("read with a wrong password: %q %v", got, err)
	}
	return -1, "publish and read refused", nil
}

func (a *authRun) sdkReadOnly(s *Server) (time.Duration, string, error) {
	rw, err := a.sdkConfig(s, "app-rw", a.users["app-rw"], "ro-writer")
	if err != nil {
		return 0, "", err
	}
	id := "sdkgo.auth.ro." + a.env.RunID
	if err := publishEventually(rw, id, "visible"); err != nil {
		return 0, "", fmt.Errorf("setup publish: %w", err)
	}
	c, err := a.sdkConfig(s, "app-r", a.users["app-r"], "ro")
	if err != nil {
		return 0, "", err
	}
	if _, err := readable(c, id, "DEFAULT_GROUP", "visible"); err != nil {
		return 0, "", fmt.Errorf("read-only user: %w", err)
	}
	if ok, err := c.PublishConfig(vo.ConfigParam{DataId: id, Group: "DEFAULT_GROUP", Content: "x"}); ok || !refused403(err) {
		return 0, "", fmt.Errorf("read-only user's publish: %v %v", ok, err)
	}
	return -1, "read allowed, publish refused", nil
}

func (a *authRun) sdkConfigExpiry(s *Server) (time.Duration, string, error) {
	c, err := a.sdkConfig(s, "app-rw", a.users["app-rw"], "expiry")
	if err != nil {
		return 0, "", err
	}
	id := "sdkgo.auth.exp." + a.env.RunID
	if err := publishEventually(c, id, "before"); err != nil {
		return 0, "", fmt.Errorf("publish before: %w", err)
	}
	ch := make(chan string, 16)
	if err := c.ListenConfig(vo.ConfigParam{DataId: id, Group: "DEFAULT_GROUP", OnChange: func(_, _, _, data string) {
		select {
		case ch <- data:
		default:
		}
	}}); err != nil {
		return 0, "", err
	}
	time.Sleep(expiryWait)
	t0 := time.Now()
	if ok, err := c.PublishConfig(vo.ConfigParam{DataId: id, Group: "DEFAULT_GROUP", Content: "after"}); err != nil || !ok {
		return 0, "", fmt.Errorf("publish %s after the start: %v %v", expiryWait, ok, err)
	}
	timeout := time.After(40 * time.Second)
	for {
		select {
		case v := <-ch:
			if v != "after" {
				continue
			}
			if _, err := readable(c, id, "DEFAULT_GROUP", "after"); err != nil {
				return 0, "", err
			}
			return time.Since(t0), fmt.Sprintf("publish, listener and read work %s after the start (token ttl %d s)", expiryWait, AuthTokenTTL), nil
		case <-timeout:
			return 0, "", errors.New("no OnChange with the value published after the expiry")
		}
	}
}

func (a *authRun) sdkNamingExpiry(s *Server) (time.Duration, string, error) {
	n, err := a.sdkNaming(s, "app-rw", a.users["app-rw"], "naming")
	if err != nil {
		return 0, "", err
	}
	svc := "sdkgo.auth.kept." + a.env.RunID
	if _, err := eventually(20*time.Second, func() error {
		ok, err := n.RegisterInstance(regParam(svc, "", 19101, nil))
		if err == nil && !ok {
			err = errors.New("register answered false")
		}
		return err
	}); err != nil {
		return 0, "", fmt.Errorf("register: %w", err)
	}
	time.Sleep(expiryWait)
	healthy, err := a.instanceHealthy(s, a.ns().Apps, "DEFAULT_GROUP@@"+svc, 19101)
	if err != nil {
		return 0, "", err
	}
	if !healthy {
		return 0, "", errors.New("the instance turned unhealthy (beats refused after the expiry?)")
	}
	t0 := time.Now()
	if ok, err := n.DeregisterInstance(vo.DeregisterInstanceParam{Ip: "127.0.0.1", Port: 19101, ServiceName: svc, Ephemeral: true}); err != nil || !ok {
		return 0, "", fmt.Errorf("deregister after the expiry: %v %v", ok, err)
	}
	return time.Since(t0), fmt.Sprintf("beats kept the instance healthy %s; deregister works (token ttl %d s)", expiryWait, AuthTokenTTL), nil
}
