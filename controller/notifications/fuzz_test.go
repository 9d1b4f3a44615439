package notifications

import (
	"strings"
	"testing"
)

// FuzzParse compiles arbitrary notification configurations — a service,
// a template, a trigger and the default triggers — whose service reads a
// token from the Secret: nothing panics, and neither the error nor a
// warning quotes the token, whatever the service's YAML does with it.
//
//	go test -run '^$' -fuzz FuzzParse ./controller/notifications/
func FuzzParse(f *testing.F) {
	f.Add("slack", "token: $token\n", "message: hi {{.app.metadata.name}}", "- when: app.status.sync.status == 'Unknown'\n  send: [t]", "[on-x]", "s3cr3t-0123456789")
	f.Add("webhook.hook", "url: https://h/$token\nheaders: [{name: a, value: $token}]", "webhook:\n  hook:\n    method: POST\n    body: '{{'", "- when: 1 +\n  send: [t]", "", "s3cr3t-0123456789")
	f.Add("email", "host: $token\nport: x", "{{", "[{when: true, oncePer: app.x, send: [missing]}]", "on-x", "tok:with-colon")
	f.Add("opsgenie", "apiUrl: [$token", "email:\n  subject: '{{template \"x\"}}'", "- {}", "[", "key\n  nested: 1")
	f.Fuzz(func(t *testing.T, service, serviceYAML, template, trigger, defaults, token string) {
		if len(token) < 8 || strings.Contains(service+serviceYAML+template+trigger+defaults, token) || strings.ContainsRune(token, '$') {
			return
		}
		data := map[string]string{
			"service." + service: strings.ReplaceAll(serviceYAML, "$token", "$tok"),
			"template.t":         template,
			"trigger.on-x":       trigger,
			"defaultTriggers":    defaults,
		}
		cfg, err := Parse(data, map[string][]byte{"tok": []byte(token)})
		if err != nil {
			if strings.Contains(err.Error(), token) {
				t.Fatalf("the error quotes the Secret's value: %v", err)
			}
			return
		}
		for _, w := range cfg.Warnings() {
			if strings.Contains(w, token) {
				t.Fatalf("a warning quotes the Secret's value: %s", w)
			}
		}
	})
}
