package remote

import (
	"github.com/nacosd/nacosd/compat"
)

// Class names (metadata.type) of the payloads this package knows.
const (
	TypeServerCheckRequest       = "ServerCheckRequest"
	TypeServerCheckResponse      = "ServerCheckResponse"
	TypeConnectionSetupRequest   = "ConnectionSetupRequest"
	TypeSetupAckRequest          = "SetupAckRequest"
	TypeSetupAckResponse         = "SetupAckResponse"
	TypeHealthCheckRequest       = "HealthCheckRequest"
	TypeHealthCheckResponse      = "HealthCheckResponse"
	TypeClientDetectionRequest   = "ClientDetectionRequest"
	TypeClientDetectionResponse  = "ClientDetectionResponse"
	TypeConnectResetRequest      = "ConnectResetRequest"
	TypeConnectResetResponse     = "ConnectResetResponse"
	TypeServerLoaderInfoRequest  = "ServerLoaderInfoRequest"
	TypeServerLoaderInfoResponse = "ServerLoaderInfoResponse"
	TypeErrorResponse            = "ErrorResponse"

	TypeConfigQueryRequest              = "ConfigQueryRequest"
	TypeConfigQueryResponse             = "ConfigQueryResponse"
	TypeConfigPublishRequest            = "ConfigPublishRequest"
	TypeConfigPublishResponse           = "ConfigPublishResponse"
	TypeConfigRemoveRequest             = "ConfigRemoveRequest"
	TypeConfigRemoveResponse            = "ConfigRemoveResponse"
	TypeConfigBatchListenRequest        = "ConfigBatchListenRequest"
	TypeConfigChangeBatchListenResponse = "ConfigChangeBatchListenResponse"
	TypeConfigChangeNotifyRequest       = "ConfigChangeNotifyRequest"
	TypeConfigChangeNotifyResponse      = "ConfigChangeNotifyResponse"
	TypeClientConfigMetricRequest       = "ClientConfigMetricRequest"
	TypeClientConfigMetricResponse      = "ClientConfigMetricResponse"
)

// Modules (Request.getModule).
const (
	ModuleInternal = "internal"
	ModuleConfig   = "config"
	ModuleNaming   = "naming"
)

// RequestBase is what every request carries: its headers (the body's
// "headers" merged with the metadata's) and requestId.
type RequestBase struct {
	Headers   Header
	RequestID string
}

// Requester is a request class: its type name, module and JSON (for
// requests the server sends, and for clients).
type Requester interface {
	Type() string
	Module() string
	// appendFields writes the class's own properties.
	appendFields(w *compat.JSON)
	Base() *RequestBase
}

// Base returns the common part.
func (b *RequestBase) Base() *RequestBase { return b }

// EncodeRequest renders a request as Java's GrpcUtils.convert(Request) does:
// the headers go into the metadata, the JSON has "headers":{} (cleared
// before serialisation), requestId when set, the class's properties and the
// getter-only "module".
func EncodeRequest(r Requester, clientIP string) *Payload {
	w := compat.NewJSON(128)
	w.BeginObject()
	w.Key("headers").BeginObject().EndObject()
	b := r.Base()
	if b.RequestID != "" {
		w.Key("requestId").Str(b.RequestID)
	}
	r.appendFields(w)
	w.Key("module").Str(r.Module())
	w.EndObject()
	var h map[string]string
	if len(b.Headers) > 0 {
		h = map[string]string(b.Headers)
	}
	return &Payload{Metadata: Metadata{Type: r.Type(), ClientIP: clientIP, Headers: h}, Body: w.Bytes()}
}

// ---- internal module ----

// ServerCheckRequest asks for the connection id (unary, before the stream).
type ServerCheckRequest struct{ RequestBase }

// Type is the class name.
func (*ServerCheckRequest) Type() string { return TypeServerCheckRequest }

// Module is "internal".
func (*ServerCheckRequest) Module() string            { return ModuleInternal }
func (*ServerCheckRequest) appendFields(*compat.JSON) {}

// HealthCheckRequest is the client's keep-alive (unary).
type HealthCheckRequest struct{ RequestBase }

// Type is the class name.
func (*HealthCheckRequest) Type() string { return TypeHealthCheckRequest }

// Module is "internal".
func (*HealthCheckRequest) Module() string            { return ModuleInternal }
func (*HealthCheckRequest) appendFields(*compat.JSON) {}

// ConnectionSetupRequest is the first message of a client's stream.
type ConnectionSetupRequest struct {
	RequestBase
	ClientVersion string
	Tenant        string
	Labels        map[string]string
	// AbilityTable nil means the client sent none (no SetupAckRequest then).
	AbilityTable map[string]bool
}

// Type is the class name.
func (*ConnectionSetupRequest) Type() string { return TypeConnectionSetupRequest }

// Module is "internal".
func (*ConnectionSetupRequest) Module() string { return ModuleInternal }

func (r *ConnectionSetupRequest) appendFields(w *compat.JSON) {
	if r.ClientVersion != "" {
		w.Key("clientVersion").Str(r.ClientVersion)
	}
	w.Key("tenant").Str(r.Tenant)
	w.Key("labels").StrMap(compat.JavaHashMapKeys(r.Labels), r.Labels, false)
	if r.AbilityTable != nil {
		appendBoolMap(w.Key("abilityTable"), r.AbilityTable)
	}
}

func appendBoolMap(w *compat.JSON, m map[string]bool) {
	w.BeginObject()
	for _, k := range sortedKeys(m) {
		w.Key(k).Bool(m[k])
	}
	w.EndObject()
}

// SetupAckRequest tells a client its connection is registered, with the
// server's abilities (server → client, no ack expected).
type SetupAckRequest struct {
	RequestBase
	AbilityTable map[string]bool
}

// Type is the class name.
func (*SetupAckRequest) Type() string { return TypeSetupAckRequest }

// Module is "internal".
func (*SetupAckRequest) Module() string { return ModuleInternal }

func (r *SetupAckRequest) appendFields(w *compat.JSON) {
	if r.AbilityTable != nil {
		appendBoolMap(w.Key("abilityTable"), r.AbilityTable)
	}
}

// ClientDetectionRequest asks a silent client whether it is alive.
type ClientDetectionRequest struct{ RequestBase }

// Type is the class name.
func (*ClientDetectionRequest) Type() string { return TypeClientDetectionRequest }

// Module is "internal".
func (*ClientDetectionRequest) Module() string            { return ModuleInternal }
func (*ClientDetectionRequest) appendFields(*compat.JSON) {}

// ConnectResetRequest tells a client to reconnect, to ServerIP:ServerPort
// when set (else to a server of its choice).
type ConnectResetRequest struct {
	RequestBase
	ServerIP, ServerPort, ConnectionID string
}

// Type is the class name.
func (*ConnectResetRequest) Type() string { return TypeConnectResetRequest }

// Module is "internal".
func (*ConnectResetRequest) Module() string { return ModuleInternal }

func (r *ConnectResetRequest) appendFields(w *compat.JSON) {
	if r.ServerIP != "" {
		w.Key("serverIp").Str(r.ServerIP)
	}
	if r.ServerPort != "" {
		w.Key("serverPort").Str(r.ServerPort)
	}
	if r.ConnectionID != "" {
		w.Key("connectionId").Str(r.ConnectionID)
	}
}

// ServerLoaderInfoRequest asks for the server's connection metrics.
type ServerLoaderInfoRequest struct{ RequestBase }

// Type is the class name.
func (*ServerLoaderInfoRequest) Type() string { return TypeServerLoaderInfoRequest }

// Module is "internal".
func (*ServerLoaderInfoRequest) Module() string            { return ModuleInternal }
func (*ServerLoaderInfoRequest) appendFields(*compat.JSON) {}

// ---- config module ----

// ConfigKey is AbstractConfigRequest's dataId, group and tenant; "" is
// written as null. HasDataID and HasGroup tell a decoded request's present
// (non-null) values from absent ones, which some of Java's messages show.
type ConfigKey struct {
	DataID, Group, Tenant string
	HasDataID, HasGroup   bool
}

func (k *ConfigKey) appendKey(w *compat.JSON) {
	if k.DataID != "" {
		w.Key("dataId").Str(k.DataID)
	}
	if k.Group != "" {
		w.Key("group").Str(k.Group)
	}
	if k.Tenant != "" {
		w.Key("tenant").Str(k.Tenant)
	}
}

func (o *object) configKey() (k ConfigKey, err error) {
	if k.DataID, k.HasDataID, err = o.str("dataId"); err != nil {
		return
	}
	if k.Group, k.HasGroup, err = o.str("group"); err != nil {
		return
	}
	k.Tenant, err = o.strOr("tenant")
	return
}

// ConfigQueryRequest reads a config. The "notify" header tells a read
// caused by a change notification.
type ConfigQueryRequest struct {
	RequestBase
	ConfigKey
	Tag string
}

// Type is the class name.
func (*ConfigQueryRequest) Type() string { return TypeConfigQueryRequest }

// Module is "config".
func (*ConfigQueryRequest) Module() string { return ModuleConfig }

func (r *ConfigQueryRequest) appendFields(w *compat.JSON) {
	r.appendKey(w)
	if r.Tag != "" {
		w.Key("tag").Str(r.Tag)
	}
	w.Key("notify").Bool(r.Headers.Get("notify") == "true")
}

// ConfigPublishRequest publishes a config; tag, betaIps, appName, type,
// src_user, config_tags, desc, use, effect, schema and encryptedDataKey
// travel in AdditionMap.
type ConfigPublishRequest struct {
	RequestBase
	ConfigKey
	Content string
	// HasContent is false when content was absent or null.
	HasContent  bool
	CasMD5      string
	AdditionMap map[string]string
}

// Type is the class name.
func (*ConfigPublishRequest) Type() string { return TypeConfigPublishRequest }

// Module is "config".
func (*ConfigPublishRequest) Module() string { return ModuleConfig }

// Addition returns an addition parameter (ok false when absent or null).
func (r *ConfigPublishRequest) Addition(key string) (string, bool) {
	v, ok := r.AdditionMap[key]
	return v, ok
}

func (r *ConfigPublishRequest) appendFields(w *compat.JSON) {
	r.appendKey(w)
	if r.HasContent || r.Content != "" {
		w.Key("content").Str(r.Content)
	}
	if r.CasMD5 != "" {
		w.Key("casMd5").Str(r.CasMD5)
	}
	if r.AdditionMap != nil {
		w.Key("additionMap").StrMap(compat.JavaHashMapKeys(r.AdditionMap), r.AdditionMap, false)
	}
}

// ConfigRemoveRequest deletes a config (or, with Tag, a tag variant).
type ConfigRemoveRequest struct {
	RequestBase
	ConfigKey
	Tag string
}

// Type is the class name.
func (*ConfigRemoveRequest) Type() string { return TypeConfigRemoveRequest }

// Module is "config".
func (*ConfigRemoveRequest) Module() string { return ModuleConfig }

func (r *ConfigRemoveRequest) appendFields(w *compat.JSON) {
	r.appendKey(w)
	if r.Tag != "" {
		w.Key("tag").Str(r.Tag)
	}
}

// ConfigListenContext is one listened config with the client's MD5.
type ConfigListenContext struct {
	Group, MD5, DataID, Tenant string
}

// ConfigBatchListenRequest starts (Listen) or stops listening to configs.
type ConfigBatchListenRequest struct {
	RequestBase
	Listen   bool
	Contexts []ConfigListenContext
}

// Type is the class name.
func (*ConfigBatchListenRequest) Type() string { return TypeConfigBatchListenRequest }

// Module is "config".
func (*ConfigBatchListenRequest) Module() string { return ModuleConfig }

func (r *ConfigBatchListenRequest) appendFields(w *compat.JSON) {
	w.Key("listen").Bool(r.Listen)
	w.Key("configListenContexts").BeginArray()
	for _, c := range r.Contexts {
		w.BeginObject().Key("group").Str(c.Group).Key("md5").Str(c.MD5).Key("dataId").Str(c.DataID).Key("tenant").Str(c.Tenant).EndObject()
	}
	w.EndArray()
}

// ConfigChangeNotifyRequest tells a listening client that a config changed
// (server → client; the client acks with ConfigChangeNotifyResponse).
type ConfigChangeNotifyRequest struct {
	RequestBase
	ConfigKey
}

// Type is the class name.
func (*ConfigChangeNotifyRequest) Type() string { return TypeConfigChangeNotifyRequest }

// Module is "config".
func (*ConfigChangeNotifyRequest) Module() string { return ModuleConfig }

func (r *ConfigChangeNotifyRequest) appendFields(w *compat.JSON) { r.appendKey(w) }

// MetricsKey is one key of ClientConfigMetricRequest.
type MetricsKey struct{ Type, Key string }

// ClientConfigMetricRequest asks a client for its config cache metrics
// (server → client).
type ClientConfigMetricRequest struct {
	RequestBase
	MetricsKeys []MetricsKey
}

// Type is the class name.
func (*ClientConfigMetricRequest) Type() string { return TypeClientConfigMetricRequest }

// Module is "config".
func (*ClientConfigMetricRequest) Module() string { return ModuleConfig }

func (r *ClientConfigMetricRequest) appendFields(w *compat.JSON) {
	w.Key("metricsKeys").BeginArray()
	for _, k := range r.MetricsKeys {
		w.BeginObject().Key("type").Str(k.Type).Key("key").Str(k.Key).EndObject()
	}
	w.EndArray()
}

// ---- decoding ----

// Unknown is a request of a class this package does not decode (its type is
// known to the caller, who answers it).
type Unknown struct {
	RequestBase
	TypeName string
}

// Type is the class name.
func (u *Unknown) Type() string { return u.TypeName }

// Module is unknown.
func (*Unknown) Module() string            { return "" }
func (*Unknown) appendFields(*compat.JSON) {}

// DecodeRequest reads the request a Payload carries, as GrpcUtils.parse does
// (JSON into the class metadata.type names, then the metadata headers put
// over the body's). A body Java would refuse is a *DecodeError; a null body
// decodes to nil (Java's parse returns null). Classes this package does not
// decode come back as *Unknown after their common properties are read.
func DecodeRequest(p *Payload) (Requester, error) {
	typ := p.Metadata.Type
	o, release, err := parseObject(mustClass(typ), p.Body)
	defer release() // every value below is copied out
	if err != nil || o == nil {
		return nil, err
	}
	h, id, err := o.requestBase(p.Metadata.Headers)
	if err != nil {
		return nil, err
	}
	rb := RequestBase{Headers: h, RequestID: id}
	switch typ {
	case TypeServerCheckRequest:
		return &ServerCheckRequest{rb}, nil
	case TypeHealthCheckRequest:
		return &HealthCheckRequest{rb}, nil
	case TypeServerLoaderInfoRequest:
		return &ServerLoaderInfoRequest{rb}, nil
	case TypeConnectionSetupRequest:
		r := &ConnectionSetupRequest{RequestBase: rb}
		if r.ClientVersion, err = o.strOr("clientVersion"); err != nil {
			return nil, err
		}
		if r.Tenant, err = o.strOr("tenant"); err != nil {
			return nil, err
		}
		if r.Labels, err = o.strMap("labels"); err != nil {
			return nil, err
		}
		if r.AbilityTable, err = o.boolMap("abilityTable"); err != nil {
			return nil, err
		}
		return r, nil
	case TypeConfigQueryRequest:
		r := &ConfigQueryRequest{RequestBase: rb}
		if r.ConfigKey, err = o.configKey(); err != nil {
			return nil, err
		}
		if r.Tag, err = o.strOr("tag"); err != nil {
			return nil, err
		}
		return r, nil
	case TypeConfigPublishRequest:
		r := &ConfigPublishRequest{RequestBase: rb}
		if r.ConfigKey, err = o.configKey(); err != nil {
			return nil, err
		}
		if r.Content, r.HasContent, err = o.str("content"); err != nil {
			return nil, err
		}
		if r.CasMD5, err = o.strOr("casMd5"); err != nil {
			return nil, err
		}
		if r.AdditionMap, err = o.strMap("additionMap"); err != nil {
			return nil, err
		}
		return r, nil
	case TypeConfigRemoveRequest:
		r := &ConfigRemoveRequest{RequestBase: rb}
		if r.ConfigKey, err = o.configKey(); err != nil {
			return nil, err
		}
		if r.Tag, err = o.strOr("tag"); err != nil {
			return nil, err
		}
		return r, nil
	case TypeConfigBatchListenRequest:
		r := &ConfigBatchListenRequest{RequestBase: rb}
		if r.Listen, err = o.boolean("listen", true); err != nil {
			return nil, err
		}
		err = o.objects("configListenContexts", "ConfigBatchListenRequest$ConfigListenContext", func(e *object) error {
			var c ConfigListenContext
			if e != nil {
				var err error
				if c.Group, err = e.strOr("group"); err != nil {
					return err
				}
				if c.MD5, err = e.strOr("md5"); err != nil {
					return err
				}
				if c.DataID, err = e.strOr("dataId"); err != nil {
					return err
				}
				if c.Tenant, err = e.strOr("tenant"); err != nil {
					return err
				}
			}
			r.Contexts = append(r.Contexts, c)
			return nil
		})
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	if r, ok, err := decodeNaming(typ, o, rb); ok {
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	return &Unknown{RequestBase: rb, TypeName: typ}, nil
}
