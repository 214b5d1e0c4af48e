-- The directory listings of migration 3 move to the scan cache.
DROP TABLE dir_listings;
