module github.com/kiln-dev/kiln/runs/curate/compare

go 1.26.8

replace github.com/kiln-dev/kiln => ../../..

require (
	github.com/ekzhu/minhash-lsh v0.0.0-20171225071031-5c06ee8586a1
	github.com/kiln-dev/kiln v0.0.0-00010101000000-000000000000
)

require (
	github.com/dgryski/go-metro v0.0.0-20250106013310-edb8663e5e33 // indirect
	github.com/dgryski/go-minhash v0.0.0-20170608043002-7fe510aff544 // indirect
	github.com/dgryski/go-spooky v0.0.0-20170606183049-ed3d087f40e2 // indirect
)
