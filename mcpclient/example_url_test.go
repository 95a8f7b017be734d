package mcpclient_test

import (
	"errors"
	"fmt"

	"github.com/acpgate/acpgate/mcpclient"
)

// CheckURL is the rule for a server's URL: plain http only to loopback
// unless the server's spec allows it; its errors wrap sentinels for
// errors.Is.
func ExampleCheckURL() {
	for _, u := range []string{"https://mcp.example.com/mcp", "http://127.0.0.1:9000/mcp", "http://mcp.example.com/mcp", "ftp://mcp.example.com"} {
		err := mcpclient.CheckURL(u, false)
		fmt.Printf("%s: ok %t, insecure %t, scheme %t\n", u, err == nil, errors.Is(err, mcpclient.ErrInsecureHTTP), errors.Is(err, mcpclient.ErrURLScheme))
	}
	fmt.Println("allowed:", mcpclient.CheckURL("http://mcp.example.com/mcp", true) == nil)
	// Output:
	// https://mcp.example.com/mcp: ok true, insecure false, scheme false
	// http://127.0.0.1:9000/mcp: ok true, insecure false, scheme false
	// http://mcp.example.com/mcp: ok false, insecure true, scheme false
	// ftp://mcp.example.com: ok false, insecure false, scheme true
	// allowed: true
}
