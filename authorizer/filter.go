package authorizer

import "strings"

// Filter selects bindings, as DescribeAcls and DeleteAcls do (Kafka's
// AclBindingFilter). ResourceAny, PatternAny, OpAny and PermissionAny match
// every value; a nil Name, Principal or Host matches every one.
//
// PatternMatch selects every binding that would apply to the named resource:
// LITERAL bindings of that name or of "*", and PREFIXED bindings whose
// prefix starts the name. PatternAny, LITERAL and PREFIXED compare the name
// exactly.
type Filter struct {
	ResourceType ResourceType
	Name         *string
	Pattern      PatternType
	Principal    *string
	Host         *string
	Operation    Operation
	Permission   Permission
}

// Validate says why Kafka would refuse the filter (INVALID_REQUEST): it may
// not hold UNKNOWN values.
func (f Filter) Validate() error {
	if f.ResourceType == ResourceUnknown || f.ResourceType > ResourceUser || f.ResourceType < 0 ||
		f.Pattern == PatternUnknown || f.Pattern > PatternPrefixed || f.Pattern < 0 ||
		f.Operation == OpUnknown || f.Operation > OpTwoPhaseCommit || f.Operation < 0 ||
		f.Permission == PermissionUnknown || f.Permission > PermissionAllow || f.Permission < 0 {
		return ErrInvalid
	}
	return nil
}

// Matches says whether the filter selects the binding.
func (f Filter) Matches(a ACL) bool {
	if f.ResourceType != ResourceAny && f.ResourceType != a.ResourceType {
		return false
	}
	switch f.Pattern {
	case PatternAny:
		if f.Name != nil && *f.Name != a.Name {
			return false
		}
	case PatternMatch:
		if f.Name != nil {
			switch a.Pattern {
			case PatternLiteral:
				if a.Name != *f.Name && a.Name != Wildcard {
					return false
				}
			case PatternPrefixed:
				if !strings.HasPrefix(*f.Name, a.Name) {
					return false
				}
			default:
				return false
			}
		}
	default:
		if f.Pattern != a.Pattern || (f.Name != nil && *f.Name != a.Name) {
			return false
		}
	}
	return (f.Principal == nil || *f.Principal == a.Principal) &&
		(f.Host == nil || *f.Host == a.Host) &&
		(f.Operation == OpAny || f.Operation == a.Operation) &&
		(f.Permission == PermissionAny || f.Permission == a.Permission)
}
