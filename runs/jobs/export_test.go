package jobs

// RetryDelay exports retryDelay to the external tests.
var RetryDelay = retryDelay
