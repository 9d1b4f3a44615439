package model

// Me is the caller of a request.
type Me struct {
	LoggedIn bool
	Username string
	Groups   []string
	Email    *string
}

// Settings is the public part of graphcd's settings.
type Settings struct {
	URL               string
	UIBannerContent   string
	UIBannerURL       string
	UIBannerPermanent bool
	SSOProviders      []string
	// StatusBadgeEnabled is statusbadge.enabled: /api/badge answers with
	// applications' status.
	StatusBadgeEnabled bool
}
