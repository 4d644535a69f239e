package compat

// NacosVersion is the Nacos server version nacosd speaks and reports (the
// member's version, /v1/console/server/state, the console): Java Nacos
// 1.4.8, whose wire behaviour this package describes.
const NacosVersion = "1.4.8"
