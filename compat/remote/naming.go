package remote

// Class names of the naming module (api/naming/remote).
const (
	TypeInstanceRequest           = "InstanceRequest"
	TypeInstanceResponse          = "InstanceResponse"
	TypeBatchInstanceRequest      = "BatchInstanceRequest"
	TypeBatchInstanceResponse     = "BatchInstanceResponse"
	TypePersistentInstanceRequest = "PersistentInstanceRequest"
	TypeServiceListRequest        = "ServiceListRequest"
	TypeServiceListResponse       = "ServiceListResponse"
	TypeServiceQueryRequest       = "ServiceQueryRequest"
	TypeQueryServiceResponse      = "QueryServiceResponse"
	TypeSubscribeServiceRequest   = "SubscribeServiceRequest"
	TypeSubscribeServiceResponse  = "SubscribeServiceResponse"
	TypeNotifySubscriberRequest   = "NotifySubscriberRequest"
	TypeNotifySubscriberResponse  = "NotifySubscriberResponse"
)
