// Package hipify translates CUDA source to HIP with a rule table.
package hipify
