package main

import (
	"fmt"
	"net/url"
	"strings"
)

// preload fills a server (nacosd or Java) with what the wrk list and
// cfgget workloads read: 100 services × 100 ephemeral instances named as
// ../shared/bench/wrk/register.lua names them, or 100 configs of 1 KB
// (wrk-N.yaml, group WRK) as cfgget.lua reads them.
func preload(addr, what string) error {
	var reqs [][]byte
	switch what {
	case "instances":
		for i := range 10000 {
			reqs = append(reqs, request("POST", fmt.Sprintf("/nacos/v1/ns/instance?serviceName=wrk.svc.%d&ip=10.%d.%d.%d&port=8080&ephemeral=true",
				i%100, (i/65536)%256, (i/256)%256, i%256), "", nil, nil))
		}
	case "configs":
		content := strings.Repeat("k: 0123456789abcdef0123456789abcdef\n", 29)[:1024]
		for i := range 100 {
			body := "dataId=wrk-" + fmt.Sprint(i) + ".yaml&group=WRK&content=" + url.QueryEscape(content)
			reqs = append(reqs, request("POST", "/nacos/v1/cs/configs", "application/x-www-form-urlencoded", nil, []byte(body)))
		}
	case "configs100k": // start-up figure: 100 000 configs of 1 KB
		content := url.QueryEscape(strings.Repeat("k: 0123456789abcdef0123456789abcdef\n", 29)[:1024])
		for i := range 100000 {
			body := "dataId=start-" + fmt.Sprint(i) + ".yaml&group=START&content=" + content
			reqs = append(reqs, request("POST", "/nacos/v1/cs/configs", "application/x-www-form-urlencoded", nil, []byte(body)))
		}
	case "persistent100k": // start-up figure: 100 000 persistent instances, 1 000 services; loopback
		// addresses, since persistent instances are TCP-probed
		for i := range 100000 {
			reqs = append(reqs, request("POST", fmt.Sprintf("/nacos/v1/ns/instance?serviceName=start.svc.%d&ip=127.%d.%d.%d&port=8080&ephemeral=false",
				i%1000, (i/65536)%256, (i/256)%256, i%256), "", nil, nil))
		}
	default:
		return fmt.Errorf("preload: unknown set %q (instances, configs, configs100k, persistent100k)", what)
	}
	bad, first, err := doAll(addr, reqs, 16)
	if err != nil {
		return fmt.Errorf("preload %s: %w", what, err)
	}
	if bad > 0 {
		return fmt.Errorf("preload %s: %d of %d refused, first: %s", what, bad, len(reqs), first)
	}
	return nil
}
