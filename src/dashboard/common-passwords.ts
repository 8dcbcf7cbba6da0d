// The most common passwords of 12 characters or more, refused at sign-up and on a password change
// (CONTRACT 8, ASVS 5.0 6.2.4). Vendored, not a dependency: the 229 entries of at least 12 characters
// (shorter ones are refused by the length rule already), lower-cased, in order of frequency, from
// the 30,000 most common passwords of zxcvbn 4.4.2 (npm `zxcvbn`, lib/frequency_lists.js, drawn
// from Mark Burnett's 10 million passwords set as zxcvbn's README says).
//
// Copyright (c) 2012-2016 Dan Wheeler and Dropbox, Inc. MIT License: the full text is in
// docs/licenses/zxcvbn.txt.
export const COMMON_PASSWORDS: ReadonlySet<string> = new Set([
  "123qweasdzxc", "1qaz2wsx3edc", "q1w2e3r4t5y6", "1q2w3e4r5t6y", "mailcreated5240", "qazwsxedcrfv",
  "123456qwerty", "qwerty123456", "polniypizdec0211", "sojdlg123aljg", "leavemealone",
  "123456654321", "gfhjkmgfhjkm", "qazwsxedc123", "ghjcnjgfhjkm", "sonyericsson", "zxcasdqwe123",
  "ghhh47hj7649", "123456789qwe", "1qazxsw23edc", "masterbating", "qwerasdfzxcv", "qweasdzxc123",
  "flvbybcnhfnjh", "123456789987654321", "112233445566", "finalfantasy", "ghbdtnrfrltkf",
  "websolutions", "chickenwing101", "1qaz2wsx3edc4rfv", "justinbieber", "contortionist",
  "masturbation", "pornographic", "newproject2004", "needforspeed", "businessbabe", "123456789123",
  "masterbaiting", "maurolarastefy", "domainlock2005", "momsanaladventure", "dkflbvbhjdbx",
  "hd764nw5d7e1vb1", "qazwsxedcrfvtgb", "dkflbvbhjdyf", "counterstrike", "zaq1xsw2cde3",
  "vfvfvskfhfve", "ghjcnjghjcnj", "fkmnthyfnbdf", "123456789abc", "admin18533362",
  "23176djivanfros", "123456789qwerty", "qazxswedcvfr", "qwertyasdfgh", "1111111111zz",
  "whosyourdaddy", "fktrcfylhjdyf", "fktrcfylhjdbx", "123456789qaz", "541233432442",
  "12345678900987654321", "password1234", "ghbdtnghbdtn", "010203040506", "lost4815162342",
  "102030405060", "vanyarespekt", "combat123654", "qwerty123456789", "devilmaycry4",
  "iseedeadpeople", "89231243658s", "123456789qqq", "jamesbond007", "4815162342lost",
  "123123qweqwe", "qwertyytrewq", "1234567890qw", "1234qwerasdf", "123qwe456rty", "asdfghjkl123",
  "ghjcnjrdfibyj", "qwertyuiop123", "saun24865709", "q1w2e3r4t5y6u7", "1qa2ws3ed4rf",
  "123456789zxc", "polniypizdec110211", "ptybnxtvgbjy", "fucktheworld", "12345678987654321",
  "mevefalkcakk", "playstation3", "31217221027711", "q1w2e3r4t5y6u7i8", "zqjphsyf6ctifgu",
  "1234567890qwe", "hedimaptfcor", "lhbjkjubz2957704", "andrewjackie", "networkingpe",
  "12qw34er56ty", "1qazxsw23edcvfr4", "159753456852", "123456782000", "christopher1",
  "ingodwetrust", "installdevic", "digitalprodu", "minecraft123", "boy4u2ownnyc", "peanutbutter",
  "an83546921an13", "1234567890zzz", "olcrackmaster", "abc123456789", "auckland2010",
  "residentevil", "qawsedrftgyh", "123321qweewq", "32615948worms", "742617000027",
  "nemvxyheqdd5oqxyxyzi", "avrillavigne", "fuckyoubitch", "massimiliano", "012345678910",
  "41d8cd98f00b", "nhfdvfnjkju123", "gjkysqgbpltw", "temppassword", "ticketmaster", "01telemike01",
  "p030710p$e4o", "stratocaster", "punksnotdead", "playstation2", "fynfyfyfhbde", "ghjcnjqgfhjkm",
  "nightcrawler", "installsqlst", "123456789101", "frederiksberg", "1234567890qaz", "1a2s3d4f5g6h",
  "sanfrancisco", "89876065093rax", "ghjcnjgbpltw", "1234567qwertyu", "1234qwerasdfzxcv",
  "lytghjgtnhjdcr", "schoolgirlie", "111222333000", "zaqwsxcderfv", "iloveboobies", "seemnemaailm",
  "nhecsyfujkjdt", "qwaszxerdfcv", "antananarivu", "vfrcbvvfrcbv", "greenlantern",
  "q1w2e3r4t5y6u7i8o9p0", "passwordstandard", "corperfmonsy", "maprchem56458", "warhammer40k",
  "1234567890qwerty", "morganstanley", "1234567890987654321", "cjdthitycndj", "bltynbabrfwbz",
  "stinkyfinger", "qwertyuiop10", "qazxswedc123", "iampurehaha2", "zxcvbn123456", "gtnhjpfdjlcr",
  "123321456654", "59382113kevinp", "bpgjldsgjldthnf", "rfnthbyf1988", "1qa2ws3ed4rf5tg",
  "qwertyuiop12345", "nhfycajhvths", "msorcloledbr", "stickdaddy77", "vfhbyfvfhbyf", "asdfgh123456",
  "123456789asd", "specialinsta", "michaeljackson", "webuivalidat", "1234567887654321",
  "1234567892000", "ilovemyfamily", "weihnachtsbau", "014702580369", "qaz123wsx456",
  "123456789qwer", "111222333444555", "123456789000", "systemofadown", "vladimirovna",
  "122333444455555", "amadeusptfcor", "zxcvbnm123456789", "websolutionssu", "mortalkombat",
  "paraklast1974", "minnesota_hp", "nondriversig", "123qwerty123", "a1s2d3f4g5h6", "z1x2c3v4b5n6m7",
  "ghjnbdjcnjzybt", "thecakeisalie", "fktrcfylhjdf", "qwertyuiop12", "ontheoutside", "zcfvfzkexifz",
  "sonnenschein", "wazzkaprivet", "xxxp455w0rd5", "qwertasdfgzxcvb", "weihnachtsbaum",
]);
