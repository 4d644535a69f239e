// Package switches is Java Nacos 1.4.8's naming switch domain
// (SwitchDomain): the values an operator sets with PUT
// /v1/ns/operator/switches, their GET body, the batch entry's
// Jackson-style parser and the record the naming registry stores through
// raft. It knows nothing of the registry: naming holds one Domain value
// and consults it.
//
// The switch domain in five files: the type and the table of its fields
// (here), the GET body (json.go), PUT entry=... updates (update.go), the
// batch entry's Jackson-style parser (batch.go) and the stored form
// (record.go). The table is the one list of the fields: the other four
// walk it.
package switches

// DomainName is the fixed "name" property of the switch domain
// (UtilsAndCommons.SWITCH_DOMAIN_NAME).
const DomainName = "00-00---000-NACOS_SWITCH_DOMAIN-000---00-00"

// HealthParams is one of SwitchDomain's Http/Tcp/MysqlHealthParams: response
// time bounds in milliseconds and the re-evaluation factor.
type HealthParams struct {
	Max, Min int
	Factor   float32
}

// Default health parameters per checker type (SwitchDomain.*HealthParams).
var (
	defaultHTTPHealth  = HealthParams{Max: 5000, Min: 500, Factor: 0.85}
	defaultTCPHealth   = HealthParams{Max: 5000, Min: 1000, Factor: 0.75}
	defaultMySQLHealth = HealthParams{Max: 3000, Min: 2000, Factor: 0.65}
)

// IntMap is a Java Map<String,Integer> that remembers its iteration order,
// which Jackson writes: HashMap order for maps built by Apply, insertion
// (LinkedHashMap) order for maps read from a batch JSON. A nil Values is Java
// null.
type IntMap struct {
	Keys   []string // iteration order; every key is in Values
	Values map[string]int
}

// Get returns the value for key.
func (m IntMap) Get(key string) (int, bool) {
	v, ok := m.Values[key]
	return v, ok
}

func (m IntMap) clone() IntMap {
	if m.Values == nil {
		return IntMap{}
	}
	c := IntMap{Keys: append([]string{}, m.Keys...), Values: make(map[string]int, len(m.Values))}
	for k, v := range m.Values {
		c.Values[k] = v
	}
	return c
}

func emptyIntMap() IntMap { return IntMap{Keys: []string{}, Values: map[string]int{}} }

// Fields of Domain that Java can hold as null although the Go type has no
// nil (a batch update may set them to null).
const (
	nullPushGo uint8 = 1 << iota
	nullPushJava
	nullPushPython
	nullPushC
	nullPushCSharp
	nullMySQLHealth
)

// Domain is Nacos' SwitchDomain (naming-v1.md §9.1): the naming switches
// shown by GET /v1/ns/operator/switches and changed by PUT (§9.2). Fields
// follow the Java declaration order and types (long → int64, float →
// float32). Nil slices and a nil IntMap.Values are Java null. Values are
// copied with Clone; the zero value is not the default, use Default.
type Domain struct {
	Masters                                  []string
	AdWeightMap                              IntMap
	DefaultPushCacheMillis                   int64
	ClientBeatInterval                       int64
	DefaultCacheMillis                       int64
	DistroThreshold                          float32
	HealthCheckEnabled                       bool
	AutoChangeHealthCheckEnabled             bool
	DistroEnabled                            bool
	EnableStandalone                         bool
	PushEnabled                              bool
	CheckTimes                               int
	HTTPHealthParams                         HealthParams
	TCPHealthParams                          HealthParams
	MySQLHealthParams                        HealthParams
	IncrementalList                          []string
	ServerStatusSynchronizationPeriodMillis  int64
	ServiceStatusSynchronizationPeriodMillis int64
	DisableAddIP                             bool
	SendBeatOnly                             bool
	LightBeatEnabled                         bool
	LimitedURLMap                            IntMap
	DistroServerExpiredMillis                int64
	PushGoVersion                            string
	PushJavaVersion                          string
	PushPythonVersion                        string
	PushCVersion                             string
	PushCSharpVersion                        string
	EnableAuthentication                     bool
	// OverriddenServerStatus is nil (Java null) by default; "" after
	// entry=overriddenServerStatus&value=null.
	OverriddenServerStatus   *string
	DefaultInstanceEphemeral bool
	// HealthCheckWhiteList is a Java HashSet<String>, kept in its iteration
	// order.
	HealthCheckWhiteList []string

	nulls uint8 // Java nulls of the string / health-param fields above
}

// Default returns the SwitchDomain defaults of Nacos 1.4.8.
func Default() Domain {
	return Domain{
		AdWeightMap:                              emptyIntMap(),
		DefaultPushCacheMillis:                   10000,
		ClientBeatInterval:                       5000,
		DefaultCacheMillis:                       3000,
		DistroThreshold:                          0.7,
		HealthCheckEnabled:                       true,
		AutoChangeHealthCheckEnabled:             true,
		DistroEnabled:                            true,
		EnableStandalone:                         true,
		PushEnabled:                              true,
		CheckTimes:                               3,
		HTTPHealthParams:                         defaultHTTPHealth,
		TCPHealthParams:                          defaultTCPHealth,
		MySQLHealthParams:                        defaultMySQLHealth,
		IncrementalList:                          []string{},
		ServerStatusSynchronizationPeriodMillis:  2000,
		ServiceStatusSynchronizationPeriodMillis: 5000,
		LightBeatEnabled:                         true,
		LimitedURLMap:                            emptyIntMap(),
		DistroServerExpiredMillis:                10000,
		PushGoVersion:                            "0.1.0",
		PushJavaVersion:                          "0.1.0",
		PushPythonVersion:                        "0.4.3",
		PushCVersion:                             "1.0.12",
		PushCSharpVersion:                        "0.9.0",
		DefaultInstanceEphemeral:                 true,
		HealthCheckWhiteList:                     []string{},
	}
}

func cloneStrings(l []string) []string {
	if l == nil {
		return nil
	}
	return append([]string{}, l...)
}

// Clone returns a deep copy.
func (s Domain) Clone() Domain {
	c := s
	c.Masters = cloneStrings(s.Masters)
	c.AdWeightMap = s.AdWeightMap.clone()
	c.IncrementalList = cloneStrings(s.IncrementalList)
	c.LimitedURLMap = s.LimitedURLMap.clone()
	c.HealthCheckWhiteList = cloneStrings(s.HealthCheckWhiteList)
	if s.OverriddenServerStatus != nil {
		v := *s.OverriddenServerStatus
		c.OverriddenServerStatus = &v
	}
	return c
}

// UpdateFrom is SwitchManager.update(SwitchDomain): how Java copies a stored
// (CP) switch domain into the live one that GET /operator/switches shows and
// the naming logic reads. It copies every field except PushCSharpVersion and
// HealthCheckWhiteList, which Java forgets, so those two never change on the
// live domain.
func (s *Domain) UpdateFrom(n Domain) {
	csharp, white := s.PushCSharpVersion, s.HealthCheckWhiteList
	csharpNull := s.nulls & nullPushCSharp
	*s = n.Clone()
	s.PushCSharpVersion, s.HealthCheckWhiteList = csharp, white
	s.nulls = s.nulls&^nullPushCSharp | csharpNull
}

// HealthCheckEnabledFor is SwitchDomain.isHealthCheckEnabled(serviceName).
func (s *Domain) HealthCheckEnabledFor(serviceName string) bool {
	if s.HealthCheckEnabled {
		return true
	}
	for _, w := range s.HealthCheckWhiteList {
		if w == serviceName {
			return true
		}
	}
	return false
}

// PushVersionFor returns the minimum pushable version for a client type:
// "java", "go", "python" or "dns" (Nacos-DNS clients use pushPythonVersion),
// "c", "csharp"; "" for anything else.
func (s Domain) PushVersionFor(clientType string) string {
	switch clientType {
	case "java":
		return s.PushJavaVersion
	case "go":
		return s.PushGoVersion
	case "python", "dns":
		return s.PushPythonVersion
	case "c":
		return s.PushCVersion
	case "csharp":
		return s.PushCSharpVersion
	}
	return ""
}

// switchField is one property of SwitchDomain.
type switchField struct {
	// name is the JSON property (GET body, batch JSON, stored record).
	name string
	// ptr points at the Go field: *[]string, *IntMap, *int64, *int,
	// *float32, *bool, *HealthParams, *string or **string.
	ptr func(*Domain) any
	// null is the Domain.nulls bit marking a *string or *HealthParams
	// field as Java null (0: it cannot be null).
	null uint8
	// def is a *HealthParams field's value for members a batch leaves out;
	// nullFails makes a batch setting it to null fail (Java's NPE).
	def       HealthParams
	nullFails bool
	// set marks a *[]string that is a Java HashSet: a batch drops
	// duplicates and keeps hash order.
	set bool
	// entry is the SwitchEntry name that updates the field alone (PUT
	// entry=...&value=...) and update how; "" when none does.
	entry  string
	update func(s *Domain, f *switchField, value string) error
}

// switchFields lists the fields in SwitchDomain's declaration order, the
// order Jackson writes them in.
var switchFields = []switchField{
	{name: "masters", ptr: func(s *Domain) any { return &s.Masters }, entry: EntryMasters, update: updateMasters},
	{name: "adWeightMap", ptr: func(s *Domain) any { return &s.AdWeightMap }},
	{name: "defaultPushCacheMillis", ptr: func(s *Domain) any { return &s.DefaultPushCacheMillis },
		entry: EntryPushCacheMillis, update: updateLong(10000, "min cache time for http or tcp is too small(<10000)")},
	{name: "clientBeatInterval", ptr: func(s *Domain) any { return &s.ClientBeatInterval },
		entry: EntryClientBeatInterval, update: updateLong(0, "")},
	{name: "defaultCacheMillis", ptr: func(s *Domain) any { return &s.DefaultCacheMillis },
		entry: EntryDefaultCacheMillis, update: updateLong(1000, "min default cache time  is too small(<1000)")},
	{name: "distroThreshold", ptr: func(s *Domain) any { return &s.DistroThreshold }, entry: EntryDistroThreshold, update: updateDistroThreshold},
	{name: "healthCheckEnabled", ptr: func(s *Domain) any { return &s.HealthCheckEnabled }, entry: EntryCheck, update: updateBool},
	{name: "autoChangeHealthCheckEnabled", ptr: func(s *Domain) any { return &s.AutoChangeHealthCheckEnabled },
		entry: EntryAutoChangeHealthCheck, update: updateCommonsBool},
	{name: "distroEnabled", ptr: func(s *Domain) any { return &s.DistroEnabled }, entry: EntryDistro, update: updateBool},
	{name: "enableStandalone", ptr: func(s *Domain) any { return &s.EnableStandalone }, entry: EntryEnableStandalone, update: updateEnableStandalone},
	{name: "pushEnabled", ptr: func(s *Domain) any { return &s.PushEnabled }, entry: EntryPushEnabled, update: updateBool},
	{name: "checkTimes", ptr: func(s *Domain) any { return &s.CheckTimes }, entry: EntryHealthCheckTimes, update: updateInt},
	{name: "httpHealthParams", ptr: func(s *Domain) any { return &s.HTTPHealthParams }, def: defaultHTTPHealth, nullFails: true},
	{name: "tcpHealthParams", ptr: func(s *Domain) any { return &s.TCPHealthParams }, def: defaultTCPHealth, nullFails: true},
	{name: "mysqlHealthParams", ptr: func(s *Domain) any { return &s.MySQLHealthParams }, def: defaultMySQLHealth, null: nullMySQLHealth},
	{name: "incrementalList", ptr: func(s *Domain) any { return &s.IncrementalList }},
	// Java checks < 1000 but its message says 15000.
	{name: "serverStatusSynchronizationPeriodMillis", ptr: func(s *Domain) any { return &s.ServerStatusSynchronizationPeriodMillis },
		entry: EntryServerStatusSyncPeriod, update: updateLong(1000, "serverStatusSynchronizationPeriodMillis is too small(<15000)")},
	{name: "serviceStatusSynchronizationPeriodMillis", ptr: func(s *Domain) any { return &s.ServiceStatusSynchronizationPeriodMillis },
		entry: EntryServiceStatusSyncPeriod, update: updateLong(5000, "serviceStatusSynchronizationPeriodMillis is too small(<5000)")},
	{name: "disableAddIP", ptr: func(s *Domain) any { return &s.DisableAddIP }, entry: EntryDisableAddIP, update: updateBool},
	{name: "sendBeatOnly", ptr: func(s *Domain) any { return &s.SendBeatOnly }, entry: EntrySendBeatOnly, update: updateBool},
	{name: "lightBeatEnabled", ptr: func(s *Domain) any { return &s.LightBeatEnabled }, entry: EntryLightBeatEnabled, update: updateCommonsBool},
	{name: "limitedUrlMap", ptr: func(s *Domain) any { return &s.LimitedURLMap }, entry: EntryLimitedURLMap, update: updateLimitedURLMap},
	{name: "distroServerExpiredMillis", ptr: func(s *Domain) any { return &s.DistroServerExpiredMillis },
		entry: EntryDistroServerExpiredMilli, update: updateLong(0, "")},
	{name: "pushGoVersion", ptr: func(s *Domain) any { return &s.PushGoVersion }, null: nullPushGo},
	{name: "pushJavaVersion", ptr: func(s *Domain) any { return &s.PushJavaVersion }, null: nullPushJava},
	{name: "pushPythonVersion", ptr: func(s *Domain) any { return &s.PushPythonVersion }, null: nullPushPython},
	{name: "pushCVersion", ptr: func(s *Domain) any { return &s.PushCVersion }, null: nullPushC},
	{name: "pushCSharpVersion", ptr: func(s *Domain) any { return &s.PushCSharpVersion }, null: nullPushCSharp},
	{name: "enableAuthentication", ptr: func(s *Domain) any { return &s.EnableAuthentication }},
	{name: "overriddenServerStatus", ptr: func(s *Domain) any { return &s.OverriddenServerStatus },
		entry: EntryOverriddenServerStatus, update: updateOverriddenServerStatus},
	{name: "defaultInstanceEphemeral", ptr: func(s *Domain) any { return &s.DefaultInstanceEphemeral },
		entry: EntryDefaultInstanceEphemeral, update: updateBool},
	{name: "healthCheckWhiteList", ptr: func(s *Domain) any { return &s.HealthCheckWhiteList }, set: true},
}

// switchByName and switchByEntry index switchFields (read only).
var switchByName, switchByEntry = indexSwitchFields()

func indexSwitchFields() (byName, byEntry map[string]*switchField) {
	byName, byEntry = map[string]*switchField{}, map[string]*switchField{}
	for i := range switchFields {
		f := &switchFields[i]
		byName[f.name] = f
		if f.entry != "" {
			byEntry[f.entry] = f
		}
	}
	return byName, byEntry
}
