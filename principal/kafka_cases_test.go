package principal

// Generated from Apache Kafka 4.4's own classes (SslPrincipalMapper,
// KerberosShortNamer with the default realm EXAMPLE.COM, and ConfigDef's
// LIST parsing and validator): each case is a rules value, a name, and the
// name Kafka maps it to or the message of the exception it throws.

type ruleCase struct {
	rules, name, want, err string
}

var sslCases = []ruleCase{
	{"DEFAULT", "CN=alice,OU=eng,O=acme", "CN=alice,OU=eng,O=acme", ""},
	{"RULE:^CN=(.*?),OU=.*$/$1/L", "CN=Alice,OU=eng,O=acme", "alice", ""},
	{"RULE:^CN=(.*?),OU=.*$/$1/L", "CN=bob,O=acme", "", "No rules apply to CN=bob,O=acme, rules [RULE:^CN=(.*?),OU=.*$/$1/L]"},
	{"RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT", "CN=bob,O=acme", "CN=bob,O=acme", ""},
	{"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/, RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L, DEFAULT", "CN=serviceuser,OU=ServiceUsers,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "serviceuser", ""},
	{"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/, RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L, DEFAULT", "CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "adminuser@admin", ""},
	{"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/, RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L, DEFAULT", "OU=x,cn=Mixed.Case,O=y", "mixed.case", ""},
	{"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/, RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L, DEFAULT", "OU=x,O=y", "OU=x,O=y", ""},
	{"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/U", "CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "ADMINUSER@ADMIN", ""},
	{"RULE:^CN=([^,]*),.*$/$1/ ,  RULE:(.*)/x/", "  CN=a,O=b", "xx", ""},
	{"RULE:^CN=(.*?)\\/x/$1/", "CN=a/x", "a", ""},
	{"RULE:^CN=(.*?)\\/x/$1\\/y/", "CN=a/x", "a/y", ""},
	{"RULE:(x)/\\/$1\\$1$12$0/", "x", "/x$1x2x", ""},
	{"RULE:(x)/$5$6/", "x", "", "No group 6"},
	{"RULE:(x)/$5/", "x", "$5", ""},
	{"RULE:(x)(y)?/[$2]/", "x", "[]", ""},
	{"RULE:(?<n>x)/${n}!/", "x", "x!", ""},
	{"RULE:(x)/$a/", "x", "", "Illegal group reference"},
	{"RULE:x/$1/", "x", "", "No group 1"},
	{"RULE:b*/X/", "abc", "", "No rules apply to abc, rules [RULE:b*/X]"},
	{"RULE:.*?/x/", "abc", "xaxbxcx", ""},
	{"RULE:.*/x/", "abc", "xx", ""},
	{"RULE:(a)/x/U, RULE:b/c/,DEFAULT", "zz", "zz", ""},
	{"RULE:(.*)/$1/U", "cn=ab", "CN=AB", ""},
	{"RULE:a/b/Lxx", "a", "", "Invalid rule: `RULE:a/b/Lxx`, unmatched substring: `xx`"},
	{"foo", "a", "", "Invalid rule: `foo`, unmatched substring: `foo`"},
	{"RULE:a/b/l", "a", "", "Invalid rule: `RULE:a/b/l`, unmatched substring: `l`"},
	{"RULE:a/b", "a", "", "Invalid rule: `RULE:a/b`, unmatched substring: `RULE:a/b`"},
	{"RULE:(x)/a\\/", "x", "", "Invalid rule: `RULE:(x)/a\\/`, unmatched substring: `RULE:(x)/a\\/`"},
	{"DEFAULTX", "a", "", "Invalid rule: `DEFAULTX`, unmatched substring: `X`"},
	{"DEFAULT,,DEFAULT", "a", "a", ""},
	{"", "a", "", "No rules apply to a, rules []"},
	{",", "a", "", "No rules apply to a, rules []"},
	{"RULE:^CN=(.*),O=(.*)$/$2:$1/", "CN=a\\,b,O=c", "c:a\\,b", ""},
	{"RULE:^(CN=[^,]*),.*$/$1/L,RULE:x/y/", "CN=A,OU=b", "cn=a", ""},
}

var kerberosCases = []ruleCase{
	{"DEFAULT", "alice@EXAMPLE.COM", "alice", ""},
	{"DEFAULT", "alice/host@EXAMPLE.COM", "alice", ""},
	{"DEFAULT", "alice@OTHER.COM", "", "No rules apply to alice@OTHER.COM, rules [DEFAULT]"},
	{"DEFAULT", "alice", "alice", ""},
	{"DEFAULT", "a@b@c", "", "Malformed Kerberos name: a@b@c"},
	{"RULE:[1:$1@$0](.*@MYDOMAIN.COM)s/@.*//,DEFAULT", "user@MYDOMAIN.COM", "user", ""},
	{"RULE:[1:$1@$0](.*@MYDOMAIN.COM)s/@.*//L,DEFAULT", "User@MYDOMAIN.COM", "user", ""},
	{"RULE:[1:$1@$0](.*@MYDOMAIN.COM)s/@.*//U,DEFAULT", "User@MYDOMAIN.COM", "USER", ""},
	{"RULE:[2:$1@$0](.*@MYDOMAIN.COM)s/@.*//,DEFAULT", "kafka/broker1@MYDOMAIN.COM", "kafka", ""},
	{"RULE:[2:$1/$2@$0](.*@EXAMPLE.COM)s/@.*//", "alice/host@EXAMPLE.COM", "", "Non-simple name alice/host after auth_to_local rule RULE:[2:$1/$2@$0](.*@EXAMPLE.COM)s/@.*//"},
	{"RULE:[1:$1@$0](.*@EXAMPLE.COM)s/@.*//", "alice/host@EXAMPLE.COM", "", "No rules apply to alice/host@EXAMPLE.COM, rules [RULE:[1:$1@$0](.*@EXAMPLE.COM)s/@.*//]"},
	{"RULE:[2:$1/$2@$0](.*)s/x/y/g/L, RULE:[1:$1](a.*)/U,DEFAULT", "zz@R", "", "No rules apply to zz@R, rules [RULE:[2:$1/$2@$0](.*)s/x/y/g/L, RULE:[1:$1](a.*)/U, DEFAULT]"},
	{"RULE:[1:$1](a.*)/U", "abc@R", "ABC", ""},
	{"RULE:[1:$1]s/a/b/g", "banana@R", "bbnbnb", ""},
	{"RULE:[1:$1]s/a/b/", "banana@R", "bbnana", ""},
	{"RULE:[1:$5]", "alice@EXAMPLE.COM", "", "index 5 from $5 is outside of the valid range 0 to 1"},
	{"RULE:[1:$]", "alice@EXAMPLE.COM", "", "bad format in username mapping in "},
	{"RULE:[:$1]", "a@R", "", "For input string: \"\""},
	{"RULE:[1:$1]x", "a@R", "", "Invalid rule: `RULE:[1:$1]x`, unmatched substring: `x`"},
	{"DEFAULT,,RULE:[1:$1]", "a@R", "", "Configuration 'sasl.kerberos.principal.to.local.rules' values must not be empty."},
	{"", "alice@EXAMPLE.COM", "", "No rules apply to alice@EXAMPLE.COM, rules []"},
	{"  DEFAULT , RULE:[1:$1]  ", "a@R", "a", ""},
	{"RULE:[1:$1](.*)s/(a)/[$1]/g", "banana@R", "b[a]n[a]n[a]", ""},
}
