package authorizer

import "strings"

// Kafka's names for the enums, indexed by code.
var (
	resourceNames   = []string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"}
	patternNames    = []string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}
	operationNames  = []string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"}
	permissionNames = []string{"UNKNOWN", "ANY", "DENY", "ALLOW"}
)

func name(names []string, code int8) string {
	if code >= 0 && int(code) < len(names) {
		return names[code]
	}
	return "UNKNOWN"
}

// parse finds a name case-insensitively (with - or _), or returns ok false.
func parse(names []string, s string) (int8, bool) {
	s = strings.ReplaceAll(strings.ToUpper(s), "-", "_")
	for i, n := range names {
		if n == s && n != "UNKNOWN" {
			return int8(i), true
		}
	}
	return 0, false
}

func (t ResourceType) String() string { return name(resourceNames, int8(t)) }
func (p PatternType) String() string  { return name(patternNames, int8(p)) }
func (o Operation) String() string    { return name(operationNames, int8(o)) }
func (p Permission) String() string   { return name(permissionNames, int8(p)) }

// ParseResourceType reads a name such as "TOPIC" or "transactional-id".
func ParseResourceType(s string) (ResourceType, bool) {
	v, ok := parse(resourceNames, s)
	return ResourceType(v), ok
}

// ParsePatternType reads a name such as "LITERAL" or "prefixed".
func ParsePatternType(s string) (PatternType, bool) {
	v, ok := parse(patternNames, s)
	return PatternType(v), ok
}

// ParseOperation reads a name such as "READ" or "describe-configs".
func ParseOperation(s string) (Operation, bool) {
	v, ok := parse(operationNames, s)
	return Operation(v), ok
}

// ParsePermission reads "ALLOW" or "DENY" (or "ANY").
func ParsePermission(s string) (Permission, bool) {
	v, ok := parse(permissionNames, s)
	return Permission(v), ok
}
