package server

// Listeners, as Kafka's listeners / advertised.listeners /
// listener.security.protocol.map: every broker opens one TCP port per
// listener, and a client that connected on a listener is told that
// listener's advertised addresses of every broker (Metadata,
// FindCoordinator, the KIP-951 leader hints of Produce and Fetch). A
// container publishes one listener to the host (EXTERNAL) and one to the
// containers on its network (INTERNAL).
//
// Advertised addresses can change at runtime (SetAdvertised, PUT
// /v1/listeners/{name}): a container learns its mapped host ports only
// after it started, and a proxy in front of the brokers has addresses of
// its own.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// Listener is one of the brokers' listeners.
type Listener struct {
	// Name is the listener name (EXTERNAL, INTERNAL, PLAINTEXT, ...).
	Name string
	// SecurityProtocol is the listener's protocol, as in Kafka's
	// listener.security.protocol.map. Empty: the name itself when it is a
	// protocol name. SSL and SASL_SSL use Config.TLSDir's certificate,
	// SASL_PLAINTEXT and SASL_SSL Config.SASLUsers.
	SecurityProtocol string
	// Listen is the first broker's HOST:PORT; the others take the next
	// ports, or any free ports with port 0. An empty host listens on every
	// interface.
	Listen string
	// AdvertisedHost is the host clients are told to connect to. Default:
	// the listen host; for an empty listen host the machine's hostname, as
	// Kafka does; for a wildcard one Config.AdvertisedHost or 127.0.0.1.
	AdvertisedHost string
	// AdvertisedPort is the first broker's advertised port; the others
	// advertise the next ports. 0: the port each broker listens on.
	AdvertisedPort int
}

// SecurityProtocols are Kafka's security protocol names.
var SecurityProtocols = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}

// hostPort is an advertised address.
type hostPort struct {
	host string
	port int32
}

func (a hostPort) String() string { return net.JoinHostPort(a.host, strconv.Itoa(int(a.port))) }

// brokerListener is one listener of one broker.
type brokerListener struct {
	index    int // in Config.Listeners, the same on every broker
	name     string
	protocol string
	bindHost string
	port     int32 // bound

	adv    atomic.Pointer[hostPort]
	advSet atomic.Bool // set over the control API since the start

	ln net.Listener // guarded by b.mu; replaced on every restart
}

func (bl *brokerListener) advertised() hostPort { return *bl.adv.Load() }

// advertisedOf is broker b's address as told to a client connected on cn's
// listener.
func (cn *conn) advertisedOf(b *broker) (string, int32) {
	a := b.listeners[cn.bl.index].advertised()
	return a.host, a.port
}

// resolveListeners checks cfg's listeners (or builds the one that Listen
// and AdvertisedHost describe) and fills in their defaults.
func (c Config) resolveListeners() ([]Listener, error) {
	if len(c.Listeners) == 0 {
		host, _, err := net.SplitHostPort(c.Listen)
		if err != nil {
			return nil, fmt.Errorf("listen address %q: %w", c.Listen, err)
		}
		adv := c.AdvertisedHost
		if adv == "" {
			adv = host
			if adv == "" || adv == "0.0.0.0" || adv == "::" {
				adv = "127.0.0.1"
			}
		}
		return []Listener{{Name: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Listen: c.Listen, AdvertisedHost: adv}}, nil
	}
	out := slices.Clone(c.Listeners)
	seen := map[string]bool{}
	ports := map[string]string{}
	for i := range out {
		l := &out[i]
		if l.Name == "" || strings.ContainsAny(l.Name, ":/,= ") {
			return nil, fmt.Errorf("listener name %q: want a name such as EXTERNAL", l.Name)
		}
		if seen[l.Name] {
			return nil, fmt.Errorf("listener %s is listed twice", l.Name)
		}
		seen[l.Name] = true
		if l.SecurityProtocol == "" {
			if !slices.Contains(SecurityProtocols, l.Name) {
				return nil, fmt.Errorf("listener %s has no security protocol (set one in the listener security protocol map, e.g. %s:PLAINTEXT)", l.Name, l.Name)
			}
			l.SecurityProtocol = l.Name
		}
		if !slices.Contains(SecurityProtocols, l.SecurityProtocol) {
			return nil, fmt.Errorf("listener %s: unknown security protocol %q (want one of %s)", l.Name, l.SecurityProtocol, strings.Join(SecurityProtocols, ", "))
		}
		host, portStr, err := net.SplitHostPort(l.Listen)
		if err != nil {
			return nil, fmt.Errorf("listener %s: address %q: %w", l.Name, l.Listen, err)
		}
		if p, err := strconv.Atoi(portStr); err != nil || p < 0 || p+c.Brokers-1 > 65535 {
			return nil, fmt.Errorf("listener %s: bad port in %q", l.Name, l.Listen)
		} else if p != 0 {
			// Fixed ports of two listeners must not overlap.
			for i := range c.Brokers {
				key := strconv.Itoa(p + i)
				if other, dup := ports[key]; dup {
					return nil, fmt.Errorf("listeners %s and %s both use port %s", other, l.Name, key)
				}
				ports[key] = l.Name
			}
		}
		if l.AdvertisedPort < 0 || l.AdvertisedPort+c.Brokers-1 > 65535 {
			return nil, fmt.Errorf("listener %s: bad advertised port %d", l.Name, l.AdvertisedPort)
		}
		if l.AdvertisedHost == "" {
			switch host {
			case "":
				if l.AdvertisedHost, err = os.Hostname(); err != nil || l.AdvertisedHost == "" {
					l.AdvertisedHost = "127.0.0.1"
				}
			case "0.0.0.0", "::":
				l.AdvertisedHost = c.AdvertisedHost
				if l.AdvertisedHost == "" {
					l.AdvertisedHost = "127.0.0.1"
				}
			default:
				l.AdvertisedHost = host
			}
		}
	}
	return out, nil
}

// openListener binds listener l of broker id (0-based index i).
func openListener(b *broker, index int, l Listener, i int) (*brokerListener, error) {
	host, portStr, _ := net.SplitHostPort(l.Listen) // checked by resolveListeners
	p, _ := strconv.Atoi(portStr)
	if p != 0 {
		p += i
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
	if err != nil {
		return nil, fmt.Errorf("broker %d, listener %s: %w", b.id, l.Name, err)
	}
	bl := &brokerListener{index: index, name: l.Name, protocol: l.SecurityProtocol, bindHost: host, port: int32(ln.Addr().(*net.TCPAddr).Port), ln: ln}
	adv := hostPort{host: l.AdvertisedHost, port: bl.port}
	if l.AdvertisedPort != 0 {
		adv.port = int32(l.AdvertisedPort + i)
	}
	bl.adv.Store(&adv)
	return bl, nil
}

// Listeners reports every listener, in configuration order.
func (c *Cluster) Listeners() []ListenerState {
	out := make([]ListenerState, len(c.brokers[0].listeners))
	for i := range out {
		out[i] = c.listenerState(i)
	}
	return out
}

func (c *Cluster) listenerState(i int) ListenerState {
	first := c.brokers[0].listeners[i]
	s := ListenerState{Name: first.name, SecurityProtocol: first.protocol, Set: true}
	for _, b := range c.brokers {
		bl := b.listeners[i]
		s.Brokers = append(s.Brokers, ListenerBrokerState{
			ID:         b.id,
			Bind:       net.JoinHostPort(bl.bindHost, strconv.Itoa(int(bl.port))),
			Advertised: bl.advertised().String(),
		})
		s.Set = s.Set && bl.advSet.Load()
	}
	return s
}

// Listener reports one listener by name, or false if there is none.
func (c *Cluster) Listener(name string) (ListenerState, bool) {
	i := c.listenerIndex(name)
	if i < 0 {
		return ListenerState{}, false
	}
	return c.listenerState(i), true
}

func (c *Cluster) listenerIndex(name string) int {
	for i, bl := range c.brokers[0].listeners {
		if bl.name == name {
			return i
		}
	}
	return -1
}

// ErrUnknownListener is returned for a listener name the cluster does not
// have.
var ErrUnknownListener = errors.New("unknown listener")

// SetAdvertised changes the advertised HOST:PORT of listener name for the
// brokers in addrs (by broker id); the others keep theirs. Clients see the
// new addresses in their next Metadata. Either every address is valid and
// all change, or none does.
func (c *Cluster) SetAdvertised(name string, addrs map[int32]string) error {
	i := c.listenerIndex(name)
	if i < 0 {
		return fmt.Errorf("%w %q", ErrUnknownListener, name)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("no addresses given for listener %s", name)
	}
	parsed := map[int32]hostPort{}
	for id, a := range addrs {
		if c.broker(id) == nil {
			return fmt.Errorf("unknown broker %d", id)
		}
		host, portStr, err := net.SplitHostPort(a)
		if err != nil || host == "" {
			return fmt.Errorf("broker %d: advertised address %q is not HOST:PORT", id, a)
		}
		port, err := strconv.Atoi(portStr)
		if err != nil || port < 1 || port > 65535 {
			return fmt.Errorf("broker %d: advertised port in %q must be 1-65535", id, a)
		}
		parsed[id] = hostPort{host: host, port: int32(port)}
	}
	for id, a := range parsed {
		bl := c.broker(id).listeners[i]
		bl.adv.Store(&a)
		bl.advSet.Store(true)
	}
	if c.tls != nil { // the server certificate must name the new hosts
		var hosts []string
		for _, a := range parsed {
			hosts = append(hosts, a.host)
		}
		c.tls.served.AddHosts(hosts)
	}
	c.log.Info("advertised addresses changed", "listener", name, "addresses", addrs)
	return nil
}

// Ready says whether the cluster serves clients as configured: always,
// unless Config.AwaitAdvertised names a listener whose advertised
// addresses have not all been set yet; then it also says what it waits for.
func (c *Cluster) Ready() (bool, string) {
	if c.cfg.AwaitAdvertised == "" {
		return true, ""
	}
	i := c.listenerIndex(c.cfg.AwaitAdvertised)
	var missing []string
	for _, b := range c.brokers {
		if !b.listeners[i].advSet.Load() {
			missing = append(missing, strconv.Itoa(int(b.id)))
		}
	}
	if len(missing) == 0 {
		return true, ""
	}
	return false, fmt.Sprintf("advertised addresses of listener %s not set for broker(s) %s (PUT /v1/listeners/%s)",
		c.cfg.AwaitAdvertised, strings.Join(missing, ","), c.cfg.AwaitAdvertised)
}
