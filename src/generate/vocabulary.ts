// The words the synthetic data is made of. Every person, brand, event and outlet here is fictional.

/** Filter values each appear in many records of the bundled data (tests check the counts). */
export const OCCUPATIONS = ['Actor', 'Singer', 'Model', 'Director', 'Producer', 'Rapper', 'Athlete', 'TV Host', 'Dancer', 'Comedian'] as const;
export const OUTFIT_CATEGORIES = ['Red Carpet', 'Street Style', 'Casual', 'Formal', 'Athleisure', 'Evening Wear', 'Swimwear', 'Business'] as const;
export const NEWS_CATEGORIES = ['Fashion', 'Movies', 'Music', 'Relationships', 'Awards', 'Business', 'Lifestyle', 'TV'] as const;
export const GENRES = [
  'Action', 'Drama', 'Comedy', 'Thriller', 'Romance', 'Sci-Fi', 'Horror', 'Animation', 'Documentary', 'Fantasy', 'Crime', 'Musical',
] as const;

/** One entry per nationality: where people are born and what they are called (names drawn within a region read true). */
export interface Region { nationality: string; cities: string[]; first: string[]; last: string[] }
export const REGIONS: Region[] = [
  { nationality: 'American', cities: ['Atlanta, United States', 'Chicago, United States', 'Austin, United States', 'Los Angeles, United States', 'Brooklyn, United States'],
    first: ['Madison', 'Tyler', 'Jordan', 'Brooke', 'Marcus', 'Kaylee', 'Dakota', 'Reese', 'Darnell', 'Savannah'],
    last: ['Whitaker', 'Holloway', 'Brennan', 'Caldwell', 'Monroe', 'Prescott', 'Danforth', 'Ellison', 'Hargrove', 'Talbot'] },
  { nationality: 'British', cities: ['London, United Kingdom', 'Manchester, United Kingdom', 'Bristol, United Kingdom', 'Leeds, United Kingdom', 'Glasgow, United Kingdom'],
    first: ['Imogen', 'Rupert', 'Freya', 'Alfie', 'Harriet', 'Callum', 'Poppy', 'Declan', 'Tamsin', 'Ewan'],
    last: ['Ashworth', 'Pemberton', 'Fairfax', 'Rowntree', 'Blackwood', 'Kingsley', 'Thistlewood', 'Marlowe', 'Hartigan', 'Quill'] },
  { nationality: 'Canadian', cities: ['Toronto, Canada', 'Montréal, Canada', 'Vancouver, Canada', 'Québec City, Canada', 'Halifax, Canada'],
    first: ['Renée', 'Étienne', 'Avery', 'Gabrielle', 'Liam', 'Maëlle', 'Noah', 'Océane', 'Rhys', 'Sloane'],
    last: ['Tremblay', 'Gagnon', 'MacAllister', 'Bouchard', 'Lindqvist', 'Pelletier', 'Fraser', 'Côté', 'Lavoie', 'Okonkwo-Reid'] },
  { nationality: 'French', cities: ['Paris, France', 'Lyon, France', 'Marseille, France', 'Bordeaux, France', 'Nantes, France'],
    first: ['Chloé', 'Amélie', 'Inès', 'Théo', 'Léa', 'Mathéo', 'Anaïs', 'Clément', 'Zoë', 'Hélène'],
    last: ['Delaunay', 'Moreau', 'Lefèvre', 'Marchetti', 'Bérard', 'Rousseau', 'Vasseur', 'Garnier', 'Duplessis', 'Aubert'] },
  { nationality: 'Nigerian', cities: ['Lagos, Nigeria', 'Abuja, Nigeria', 'Ibadan, Nigeria', 'Enugu, Nigeria', 'Port Harcourt, Nigeria'],
    first: ['Chiamaka', 'Tobenna', 'Adaeze', 'Folake', 'Emeka', 'Temitope', 'Zainab', 'Obinna', 'Ifeoma', 'Damilola'],
    last: ['Adebayo', 'Okafor', 'Nwosu', 'Balogun', 'Eze', 'Adeyemi', 'Okoro', 'Olawale', 'Chukwu', 'Afolabi'] },
  { nationality: 'South Korean', cities: ['Seoul, South Korea', 'Busan, South Korea', 'Incheon, South Korea', 'Daegu, South Korea', 'Gwangju, South Korea'],
    first: ['Min-jun', 'Seo-yeon', 'Ji-ho', 'Ha-eun', 'Do-yun', 'Yuna', 'Tae-hyun', 'Soo-ah', 'Jae-won', 'Eun-bi'],
    last: ['Park', 'Kim', 'Choi', 'Han', 'Seo', 'Yoon', 'Kang', 'Jung', 'Baek', 'Moon'] },
  { nationality: 'Brazilian', cities: ['São Paulo, Brazil', 'Rio de Janeiro, Brazil', 'Salvador, Brazil', 'Belo Horizonte, Brazil', 'Recife, Brazil'],
    first: ['João', 'Luíza', 'Thiago', 'Marília', 'Caio', 'Beatriz', 'Gonçalo', 'Letícia', 'Vinícius', 'Lívia'],
    last: ['Araújo', 'Magalhães', 'Conceição', 'Figueiredo', 'Brandão', 'Assunção', 'Nogueira', 'Falcão', 'Sampaio', 'Leão'] },
  { nationality: 'Indian', cities: ['Mumbai, India', 'New Delhi, India', 'Bengaluru, India', 'Chennai, India', 'Kolkata, India'],
    first: ['Aanya', 'Vihaan', 'Ishita', 'Arjun', 'Meera', 'Kabir', 'Tara', 'Rohan', 'Nikhita', 'Dev'],
    last: ['Kapoor', 'Raghunathan', 'Mehra', 'Iyer', 'Bhattacharya', 'Malhotra', 'Deshpande', 'Sethi', 'Varma', 'Chopra-Nair'] },
  { nationality: 'Australian', cities: ['Sydney, Australia', 'Melbourne, Australia', 'Brisbane, Australia', 'Perth, Australia', 'Adelaide, Australia'],
    first: ['Mia', 'Lachlan', 'Matilda', 'Jarrah', 'Indie', 'Cooper', 'Sienna', 'Hamish', 'Tahlia', 'Beau'],
    last: ['Fitzgerald', 'Macready', 'Walsh', 'Kerrigan', 'Hollis', 'Donnelly', 'Ashby', 'Carmody', 'Lowe', 'Rafferty'] },
  { nationality: 'Spanish', cities: ['Madrid, Spain', 'Barcelona, Spain', 'Sevilla, Spain', 'Valencia, Spain', 'Bilbao, Spain'],
    first: ['José', 'Lucía', 'Joaquín', 'Inés', 'Álvaro', 'Begoña', 'Íñigo', 'Martina', 'Adrián', 'Nerea'],
    last: ['Núñez', 'Peñalver', 'Ibáñez', 'Zubizarreta', 'Montoya', 'Castaño', 'Ordóñez', 'Galindo', 'Echeverría', 'Rincón'] },
  { nationality: 'Mexican', cities: ['Ciudad de México, Mexico', 'Guadalajara, Mexico', 'Monterrey, Mexico', 'Oaxaca, Mexico', 'Puebla, Mexico'],
    first: ['Ximena', 'Santiago', 'Renata', 'Emiliano', 'Valentina', 'Mateo', 'Itzel', 'Andrés', 'Fernanda', 'Rubén'],
    last: ['Villaseñor', 'Treviño', 'Cervantes', 'Montiel', 'Saldaña', 'Alarcón', 'Quintero', 'Zárate', 'Bustamante', 'Olvera'] },
  { nationality: 'Swedish', cities: ['Stockholm, Sweden', 'Göteborg, Sweden', 'Malmö, Sweden', 'Uppsala, Sweden', 'Västerås, Sweden'],
    first: ['Björn', 'Linnéa', 'Måns', 'Elin', 'Jöran', 'Saga', 'Axel', 'Ebba', 'Viggo', 'Märta'],
    last: ['Lindström', 'Åkesson', 'Bergqvist', 'Sjöberg', 'Holmgren', 'Ekström', 'Wallin', 'Nordén', 'Strand', 'Löfgren'] },
];
/** Single-name stage personas, the way some pop stars are known. */
export const MONONYMS = ['Solène', 'Kaïa', 'Nyxé', 'Amarë', 'Zélie', 'Rayvn', 'Oyà', 'Lumi', 'Danaë', 'Jadé', 'Koa', 'Vesper'];

/** Secondary occupations that plausibly go with a primary one. */
export const SIDE_JOBS: Record<string, string[]> = {
  Actor: ['Producer', 'Director', 'Model', 'Comedian', 'Singer'], Singer: ['Dancer', 'Actor', 'Producer', 'Rapper', 'TV Host'],
  Model: ['Actor', 'TV Host', 'Dancer', 'Athlete'], Director: ['Producer', 'Actor'], Producer: ['Director', 'Rapper', 'TV Host'],
  Rapper: ['Producer', 'Singer', 'Actor'], Athlete: ['TV Host', 'Model', 'Producer'], 'TV Host': ['Comedian', 'Producer', 'Actor', 'Athlete'],
  Dancer: ['Singer', 'Model', 'TV Host'], Comedian: ['Actor', 'TV Host', 'Producer'],
};
/** How a career started, by primary occupation. */
export const DEBUTS: Record<string, string> = {
  Actor: 'landed a first screen role', Singer: 'released a debut single', Model: 'signed with a modelling agency',
  Director: 'premiered a first short film', Producer: 'produced a first independent feature', Rapper: 'dropped a first mixtape',
  Athlete: 'turned professional', 'TV Host': 'fronted a first daytime show', Dancer: 'joined a touring dance company',
  Comedian: 'performed a first stand-up set',
};
export const NETWORKS = ['instagram', 'x', 'tiktok', 'youtube', 'facebook', 'threads'];
export const INTRO_HOOKS = [
  'is known for a restless curiosity and a knack for reinvention',
  'has become one of the most recognisable faces of a generation',
  'built a devoted following long before mainstream success arrived',
  'is celebrated for fearless choices both on and off the red carpet',
  'moves easily between blockbuster projects and small personal work',
  'is as famous for candid interviews as for the work itself',
];
export const CAREER_BEATS = [
  'The breakthrough came with a role that critics still call a turning point.',
  'A string of sold-out tours followed, each bigger than the last.',
  'Early years were spent in regional theatre and late-night open mics.',
  'A viral clip turned a local reputation into international attention.',
  'Later work shifted towards producing and mentoring younger talent.',
  'Several industry honours followed, including two Golden Lens nominations.',
  'A long-running collaboration with a small independent studio shaped the style fans know today.',
  'Philanthropy became a second career, with a foundation supporting arts education.',
];

/** [house, its designers]: the designer credited on an outfit is one of the house's. */
export const BRANDS: [string, string[]][] = [
  ['Maison Aurelle', ['Céline Aurelle', 'Paul Vidrine']], ['Varenne', ['Odile Varenne']], ['Casa Olmedo', ['Rafael Olmedo', 'Nuria Olmedo']],
  ['Atelier Noiré', ['Sidonie Marchal']], ['Vessa', ['Kai Vessa']], ['Lune Rouge', ['Anouk Belmont', 'Remi Tassin']],
  ['Korvin', ['Dmitri Korvin']], ['Rosso Amalfi', ['Giulia Ferrante']], ['Bellweather', ['Oliver Bellweather']],
  ['Saint-Loury', ['Margaux Loury', 'Adrien Faye']], ['Ondine Paris', ['Ondine Cazal']], ['Mirelle', ['Mirelle Sato']],
  ['Okafor Studio', ['Nneka Okafor']], ['Hanbit Atelier', ['Lee Hanbit']], ['Solvik', ['Tove Solvik']], ['Ardent Row', ['Sam Ardent', 'Priya Row']],
  ['Calloway', ['June Calloway']], ['Esperanza Vidal', ['Esperanza Vidal']], ['Théodora', ['Théo Damaskos']], ['Nakamura Line', ['Rei Nakamura']],
];
export const COLORS = ['Black', 'Ivory', 'Crimson', 'Emerald', 'Champagne', 'Navy', 'Blush Pink', 'Silver', 'Gold', 'Cobalt', 'Burgundy', 'White', 'Lavender', 'Camel'];
/** Per outfit category: [garments, events]; `{city}` and `{year}` are filled in. */
export const OUTFIT_STYLES: Record<string, [string[], string[]]> = {
  'Red Carpet': [['Gown', 'Tuxedo', 'Column Dress', 'Cape Gown', 'Sequin Suit'],
    ['Starlight Gala {year}', 'Golden Lens Awards {year}', 'Lumière Bay Film Festival {year}', 'Harmonia Music Awards {year}']],
  'Street Style': [['Trench Coat', 'Leather Jacket', 'Oversized Blazer', 'Denim Set'], ['Street style, {city}', 'Northlight Fashion Week {year}']],
  Casual: [['Knit Sweater', 'Denim Jacket', 'Linen Shirt', 'Cargo Pants'], ['Airport arrival, {city}', 'Coffee run, {city}', 'Farmers market, {city}']],
  Formal: [['Three-Piece Suit', 'Tailored Tuxedo', 'Satin Gown', 'Midi Dress'], ['State dinner, {city}', 'Charity ball, {city}', 'Opera premiere, {city}']],
  Athleisure: [['Tracksuit', 'Sports Bra Set', 'Running Jacket', 'Leggings Set'], ['Morning run, {city}', 'Gym exit, {city}', 'Charity 10K, {city}']],
  'Evening Wear': [['Slip Dress', 'Velvet Blazer', 'Cocktail Dress', 'Silk Jumpsuit'], ['After-party, {city}', 'Album release party, {city}', 'Premiere dinner, {city}']],
  Swimwear: [['Bikini', 'One-Piece Swimsuit', 'Swim Shorts', 'Crochet Cover-Up'], ['Beach vacation, Isla Serena', 'Yacht party, Costa Brava', 'Pool party, {city}']],
  Business: [['Pinstripe Suit', 'Power Blazer', 'Pencil Skirt Set', 'Wool Coat'], ['Press junket, {city}', 'Brand launch, {city}', 'Investor summit, {city}']],
};
export const OUTFIT_LINES = [
  'The look balanced sharp tailoring with a softer, romantic silhouette.',
  'Stylists paired it with minimal jewellery to let the fabric speak.',
  'Fans quickly tracked down the piece, which sold out within hours.',
  'It marked a clear departure from the muted palette of recent appearances.',
  'The house confirmed the piece was made to measure over six weeks.',
  'A vintage clutch and sculptural heels completed the outfit.',
];

export const NEWS_AUTHORS = ['Priya Castellanos', 'Jonah Whitfield', 'Amara Okoye', 'Lena Fischbach', 'Diego Marchetti', 'Hana Sato', 'Corinne Blake', 'Tomás Varga', 'Elodie Garnier', 'Sam Kwarteng'];
/** Per news category: headline templates; `{name}`, `{movie}`, `{brand}`, `{city}` are filled in. */
export const NEWS_TITLES: Record<string, string[]> = {
  Fashion: ['{name} Stuns in Custom {brand} at Lumière Bay', '{name} Named the New Face of {brand}', 'Inside {name}\'s Boldest Looks of the Year'],
  Movies: ['{name} Joins the Cast of \'{movie}\'', '{name} Opens Up About Filming \'{movie}\'', 'First Look: {name} Transforms for \'{movie}\''],
  Music: ['{name} Announces World Tour Starting in {city}', '{name} Drops Surprise Album at Midnight', '{name} Breaks Streaming Record with New Single'],
  Relationships: ['{name} Confirms Engagement in Heartfelt Post', '{name} and Longtime Partner Spotted in {city}', '{name} Speaks Candidly About Dating in the Spotlight'],
  Awards: ['{name} Wins Big at the Golden Lens Awards', '{name} Earns First Harmonia Music Awards Nomination', '{name} Delivers Tearful Speech at Starlight Gala'],
  Business: ['{name} Launches Skincare Line with {brand}', '{name} Invests in {city} Film Studio', '{name}\'s Production Company Signs Streaming Deal'],
  Lifestyle: ['{name} Shares Morning Routine and Favourite Recipes', 'Tour {name}\'s New Home in {city}', '{name} on Wellness, Sleep and Saying No'],
  TV: ['{name} to Host New Talent Show on StreamBox', '{name} Returns for Final Season of Harbor Lights', '{name} Guest Stars in Hit Comedy Series'],
};
export const NEWS_LEADS = [
  '{name} has everyone talking this week, and the reaction online has been overwhelmingly warm.',
  'In a move few saw coming, {name} confirmed the news through a short statement on social media.',
  'Sources close to {name} describe the decision as the result of months of quiet planning.',
  'Fans in {city} were the first to notice, sharing photos long before any official word.',
];
export const NEWS_QUOTES = [
  'I wanted to do something that scared me a little. That is usually where the good stuff is.',
  'None of this happens without the people around me, and I never forget that.',
  'I am just getting started, honestly. There is so much more I want to try.',
  'It felt personal from day one, so I had to be all in.',
];
export const NEWS_CLOSERS = [
  'More details are expected in the coming weeks.',
  'Representatives declined to comment further.',
  'The announcement caps a remarkable year.',
  'Industry watchers expect the move to pay off handsomely.',
];
export const NEWS_BODY = [
  'The timing is no accident: the past year has been the busiest of {name}\'s career so far.',
  'People who have worked with {name} describe a perfectionist who still answers every message.',
  'The news lands as {name} prepares for a run of appearances in {city} and beyond.',
  'It is the latest chapter in a story that has kept fans guessing for years.',
];
export const NEWS_HEADINGS = ['What we know so far', 'Behind the scenes', 'How fans reacted', 'What comes next'];

export const TITLE_ADJECTIVES = ['Silent', 'Burning', 'Hollow', 'Crimson', 'Last', 'Distant', 'Midnight', 'Broken', 'Golden', 'Hidden', 'Wild', 'Paper', 'Glass', 'Northern', 'Electric', 'Quiet'];
export const TITLE_NOUNS = ['Harbor', 'Ember', 'Lantern', 'Orchard', 'Tide', 'Echo', 'Meridian', 'Cipher', 'Kingdom', 'Garden', 'Signal', 'Horizon', 'Mirror', 'Frontier', 'Summer', 'Requiem', 'Atlas', 'Covenant'];
export const TITLE_PLACES = ['Ashford', 'Saltmarsh', 'the North', 'Vellmar', 'Blue Hollow', 'the Deep', 'San Aurelio', 'Kestrel Bay'];
export const PROTAGONISTS = ['a disgraced detective', 'a reclusive pianist', 'two estranged sisters', 'a retired getaway driver', 'a young botanist',
  'an ambitious junior reporter', 'a widowed lighthouse keeper', 'a teenage hacker', 'a fading pop idol', 'a rookie astronaut'];
export const INCIDENTS = ['uncovers a decades-old secret', 'inherits a failing vineyard', 'receives a letter from a stranger', 'witnesses an impossible crime',
  'is stranded after a storm', 'is offered one last job', 'finds a map in a second-hand book', 'wakes up with no memory of the night before'];
export const STAKES = ['must choose between loyalty and the truth', 'races to save a town that has given up on itself', 'learns that every choice echoes',
  'has until sunrise to set things right', 'discovers that family is what you build', 'confronts the past before it swallows the future'];
export const LANGUAGES = ['English', 'French', 'Spanish', 'Korean', 'Portuguese', 'Hindi', 'Yoruba', 'Swedish', 'Japanese', 'Italian'];
export const CHARACTER_FIRST = ['Eleanor', 'Jack', 'Mara', 'Felix', 'Nadia', 'Owen', 'Iris', 'Victor', 'Clara', 'Sami', 'Rosa', 'Hugo'];
export const CHARACTER_LAST = ['Vance', 'Reyes', 'Calder', 'Moreau', 'Quinn', 'Hale', 'Sterling', 'Navarro', 'Ward', 'Lindqvist'];
export const TICKET_PLATFORMS = ['CineTix', 'SeatNow', 'ReelPass', 'FlickSeat'];

/** Critics with their outlets; a few have no bio, so null handling is exercised. */
export const CRITICS: { name: string; bio: string | null; credentials: string }[] = [
  { name: 'Margot Ellery', bio: 'Has covered film festivals for fifteen years and teaches screenwriting.', credentials: 'Chief Film Critic, The Marquee Review' },
  { name: 'Devon Achterberg', bio: 'Former projectionist turned critic with a soft spot for genre cinema.', credentials: 'Senior Critic, Reel Journal' },
  { name: 'Noémie Castel', bio: 'Writes about world cinema and the business of film.', credentials: 'Contributing Editor, Frame & Focus' },
  { name: 'Kwame Asante-Lowe', bio: 'Podcast host and festival juror.', credentials: 'Film Editor, The Daily Projector' },
  { name: 'Ruth Okonjo', bio: null, credentials: 'Staff Critic, Silver Screen Weekly' },
  { name: 'Hyun-woo Baek', bio: 'Specialises in thrillers and East Asian cinema.', credentials: 'Critic at Large, Cinephile Quarterly' },
  { name: 'Isabel Quintanilla', bio: 'Novelist and essayist who reviews films on the side.', credentials: 'Columnist, The Lumière Post' },
  { name: 'Tobias Wren', bio: 'Has seen more than 8,000 films and remembers most of them.', credentials: 'Lead Reviewer, Popcorn Ledger' },
];
/** Verdicts by rating band, highest first, with headline hooks and excerpts for that band. */
export const VERDICTS: { min: number; verdict: string; hooks: string[]; excerpts: string[] }[] = [
  { min: 8.5, verdict: 'Must Watch', hooks: ['A Triumph from Start to Finish', 'The Film of the Year', 'An Instant Classic'],
    excerpts: ['Bold, moving and impeccably made, this is cinema at full strength.', 'Every frame earns its place in a film that lingers for days.'] },
  { min: 7, verdict: 'Worth Watching', hooks: ['Smart, Stylish and Mostly Satisfying', 'A Crowd-Pleaser with Heart', 'Flawed but Fascinating'],
    excerpts: ['A confident, entertaining ride that only occasionally loses its way.', 'Strong performances carry a story that is better than it has any right to be.'] },
  { min: 5, verdict: 'Mixed', hooks: ['Style Over Substance', 'Promising but Uneven', 'Half a Great Movie'],
    excerpts: ['Moments of brilliance are buried under a muddled second act.', 'Good ideas, shaky execution and a cast doing its very best.'] },
  { min: 0, verdict: 'Skip It', hooks: ['A Misfire on Every Level', 'Lost in Its Own Ambition', 'Not Even the Cast Can Save It'],
    excerpts: ['A tired script and flat direction make this a long two hours.', 'Whatever worked on paper did not survive the edit.'] },
];
export const PROS = ['Career-best turn from {lead}', 'Gorgeous cinematography', 'A score that stays with you', 'Sharp, funny dialogue',
  'Thrilling set pieces', 'Confident direction', 'Strong ensemble cast', 'Inventive production design'];
export const CONS = ['Overlong second act', 'Predictable ending', 'Underused supporting cast', 'Uneven tone', 'Thin villain',
  'Too many subplots', 'Muddy sound mix', 'Rushed final act'];
export const REVIEW_PARAGRAPHS = [
  '{director} directs with a sure hand, and {lead} gives the kind of performance that anchors everything around it.',
  'The screenplay takes its time, trusting the audience to sit with silence and small gestures.',
  'Visually, the film is a feast: every location feels lived in, every costume tells a story.',
  'Where it stumbles is in the middle stretch, where subplots multiply faster than they resolve.',
  'By the final act the film has earned its emotion honestly, without leaning on easy tricks.',
  'The supporting cast is uniformly strong, though some deserved more than a handful of scenes.',
];
