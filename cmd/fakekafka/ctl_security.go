package main

import (
	"flag"
	"fmt"
	"net/url"
	"strings"

	"github.com/fakekafka/fakekafka/api"
)

// users runs "users", "user add NAME PASSWORD" and "user rm NAME".
func (c *ctl) users(fs *flag.FlagSet, args []string) error {
	pos, err := c.args(fs, args, 0, 3, "[add NAME PASSWORD | rm NAME]")
	if err != nil {
		return err
	}
	var us []api.SASLUser
	print := func() { c.printUsers(us) }
	switch {
	case len(pos) == 0:
		return c.show("GET", "/v1/users", nil, &us, print)
	case pos[0] == "add" && len(pos) == 3:
		return c.show("POST", "/v1/users", map[string]string{"name": pos[1], "password": pos[2]}, &us, print)
	case pos[0] == "rm" && len(pos) == 2:
		return c.show("DELETE", "/v1/users/"+url.PathEscape(pos[1]), nil, &us, print)
	}
	return usagef("want users, user add NAME PASSWORD or user rm NAME, got %q", pos)
}

func (c *ctl) printUsers(us []api.SASLUser) {
	tw := c.table("USER", "PLAIN", "SCRAM")
	for _, u := range us {
		var scram []string
		for _, s := range u.Scram {
			scram = append(scram, fmt.Sprintf("%s (%d iterations)", s.Mechanism, s.Iterations))
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\n", u.Name, u.Plain, strings.Join(scram, ", "))
	}
	tw.Flush()
}

func (c *ctl) printSecurity(st api.SecurityState) {
	fmt.Fprintf(c.out, "authorizer %s; ssl.principal.mapping.rules %s; %d denied\n",
		map[bool]string{true: "on", false: "off"}[st.Authorizer], st.SSLPrincipalMappingRules, st.DeniedTotal)
	tw := c.table("BROKER", "LISTENER", "PROTOCOL", "PRINCIPAL", "CONNECTIONS", "HOSTS")
	for _, p := range st.Principals {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", p.Broker, p.Listener, p.SecurityProtocol, p.Principal, p.Connections, strings.Join(p.Hosts, " "))
	}
	tw.Flush()
	if len(st.Denials) == 0 {
		return
	}
	fmt.Fprintln(c.out)
	tw = c.table("TIME", "PRINCIPAL", "HOST", "OPERATION", "RESOURCE", "API", "BROKER")
	for i := len(st.Denials) - 1; i >= 0; i-- { // newest first
		d := st.Denials[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s:%s:%s\t%s\t%d\n", d.Time.Format("15:04:05.000"), d.Principal, d.Host, d.Operation,
			d.ResourceType, d.PatternType, d.ResourceName, d.API, d.Broker)
	}
	tw.Flush()
}
