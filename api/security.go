package api

// SecurityState is the cluster's security at a glance (GET /v1/security,
// the dashboard's Security view): who is connected where, and what the
// authorizer recently denied.
type SecurityState struct {
	// Authorizer says whether requests are checked against ACLs.
	Authorizer bool `json:"authorizer"`
	// SSLPrincipalMappingRules is ssl.principal.mapping.rules in force.
	SSLPrincipalMappingRules string `json:"ssl_principal_mapping_rules"`
	// Principals counts the open connections per broker, listener and
	// principal, sorted by broker, listener, then principal.
	Principals []ConnectedPrincipal `json:"principals"`
	// Denials are the most recent authorization_denied events, oldest
	// first; DeniedTotal counts every one since the start.
	Denials     []Event `json:"denials"`
	DeniedTotal uint64  `json:"denied_total"`
}

// ConnectedPrincipal is a principal's open connections on one listener of
// one broker.
type ConnectedPrincipal struct {
	Broker           int32    `json:"broker"`
	Listener         string   `json:"listener"`
	SecurityProtocol string   `json:"security_protocol"`
	Principal        string   `json:"principal"`
	Connections      int      `json:"connections"`
	Hosts            []string `json:"hosts"` // the clients' addresses, sorted, without duplicates
}
