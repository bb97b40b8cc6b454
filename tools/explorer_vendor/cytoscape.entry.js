// Cytoscape.js with the fCoSE layout registered, as the global `cytoscape`.
import cytoscape from "cytoscape";
import fcose from "cytoscape-fcose";

cytoscape.use(fcose);
window.cytoscape = cytoscape;
