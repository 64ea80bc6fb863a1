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
