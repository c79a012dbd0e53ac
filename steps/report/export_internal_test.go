package report

// CheckPhysicalPages lets the package's external tests read a PDF's pages the way
// TestPagesLandOnTheirPhysicalPage does.
var CheckPhysicalPages = checkPhysicalPages
