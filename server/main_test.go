package server

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: every
// node's Close must end all of its goroutines. The real nacos-sdk-go v1
// client the SDK tests drive has no Close: its goroutines are expected.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakOptions(
		goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/common/security.(*AuthClient).AutoRefresh.func1"),
		goleak.IgnoreAnyFunction("gopkg.in/natefinch/lumberjack%2ev2.(*Logger).millRun"),
		goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/clients/naming_client.(*PushReceiver).startServer.func1"),
		goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/clients/naming_client.(*HostReactor).asyncUpdateService"),
		goleak.IgnoreAnyFunction("github.com/nacos-group/nacos-sdk-go/clients/naming_client.(*BeatReactor).sendInstanceBeat"),
	)...)
}
