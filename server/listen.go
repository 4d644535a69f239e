package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// listen binds the HTTP port first (Start's first step): the port decides
// the member address, the raft address (port − 1000) and the gRPC port.
// It fixes the advertised IP too.
func (s *Server) listen(context.Context) error {
	addr := net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: %w", portTaken(fmt.Errorf("listen on port %d: %w", s.cfg.Port, err),
			fmt.Sprintf("HTTP port %d", s.cfg.Port), addr, "choose another port (-port, server.port, SERVER_PORT)"))
	}
	s.ln = ln
	s.port = ln.Addr().(*net.TCPAddr).Port
	s.ip = s.cfg.IP
	if s.ip == "" {
		s.ip = selfIP()
	}
	s.raftAddr = s.cfg.RaftAddr
	if s.raftAddr == "" {
		switch {
		case s.cfg.Port == 0:
			s.raftAddr = "127.0.0.1:0"
		case s.cfg.Standalone:
			s.raftAddr = "127.0.0.1:" + strconv.Itoa(s.port-1000)
		default: // peers dial the member's ip at port − 1000, as Java's JRaft
			s.raftAddr = net.JoinHostPort(s.ip, strconv.Itoa(s.port-1000))
		}
	}
	return nil
}

// selfIP is the first non-loopback IPv4 address of the lowest-index up
// interface (InetUtils), else 127.0.0.1.
func selfIP() string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "127.0.0.1"
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
				return ipn.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

// portTaken explains a listen that failed because the address is taken
// (what the operator sees when another nacosd or a Java Nacos runs on the
// port); other errors pass unchanged.
func portTaken(err error, what, addr, change string) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	return fmt.Errorf("%s is taken: another process listens on %s (another nacosd, or a Java Nacos?); stop it, or %s: %w",
		what, addr, change, err)
}
