package api

// Int32 returns a pointer to v, for the optional fields that take one
// (Fault.Partition, FaultRequest.Partition, ElectRequest.Leader):
//
//	server.Fault{API: "Produce", Topic: "orders", Partition: api.Int32(0)}
func Int32(v int32) *int32 { return &v }
